#!/usr/bin/env bash
# Makes a private CA and a serving certificate for subrange's webhook, with openssl.
#
#   certs/make-certs.sh OUT_DIR [NAMESPACE] [SERVICE_NAME]
#
# OUT_DIR gets:
#   ca.crt, ca.key    the CA; ca.crt goes (base64) into every webhook entry's caBundle (README)
#   tls.crt, tls.key  the serving pair subrange loads (subrange.tls.cert-dir=OUT_DIR)
# The serving certificate is valid for localhost, 127.0.0.1, ::1 and the in-cluster names of
# the Service: SERVICE_NAME, SERVICE_NAME.NAMESPACE, SERVICE_NAME.NAMESPACE.svc and
# SERVICE_NAME.NAMESPACE.svc.cluster.local (defaults: namespace subrange-system, service
# subrange-webhook). The CA is reused when OUT_DIR already holds one, so re-running rotates the
# serving pair without changing caBundle.
set -euo pipefail

if [ $# -lt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
out=$1
namespace=${2:-subrange-system}
service=${3:-subrange-webhook}
days=${SUBRANGE_CERT_DAYS:-365}

command -v openssl >/dev/null || { echo "make-certs: openssl is required" >&2; exit 1; }
mkdir -p "$out"
umask 077

if [ ! -s "$out/ca.crt" ] || [ ! -s "$out/ca.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$((days * 3))" \
    -keyout "$out/ca.key" -out "$out/ca.crt" -subj "/CN=subrange-webhook-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi

ext=$(mktemp)
trap 'rm -f "$ext" "$out/tls.csr"' EXIT
cat > "$ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1,DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc,DNS:$service.$namespace.svc.cluster.local
EXT

# Write the new pair beside the old one and move it into place, so a running subrange that
# watches the directory never reads a half-written key.
openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$out/tls.key.new" -out "$out/tls.csr" \
  -subj "/CN=$service.$namespace.svc" 2>/dev/null
openssl x509 -req -in "$out/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
  -days "$days" -sha256 -extfile "$ext" -out "$out/tls.crt.new" 2>/dev/null
chmod 600 "$out/tls.key.new"
chmod 644 "$out/tls.crt.new" "$out/ca.crt"
mv -f "$out/tls.key.new" "$out/tls.key"
mv -f "$out/tls.crt.new" "$out/tls.crt"
rm -f "$out/ca.srl"

echo "make-certs: wrote $out/{ca.crt,tls.crt,tls.key} for $service.$namespace.svc" >&2
