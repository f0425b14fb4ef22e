#!/usr/bin/env bash
# Builds subrange's base image offline, from Debian packages only: Debian bookworm (minbase) with
# openjdk-17-jre-headless, as a `docker save` tarball Jib reads through `tar://`.
#
#   image/build-base.sh            # prints the tarball's path (built once, then reused)
#
# Users who can pull from a registry do not need this: `mvn -Pimage package` uses a JRE 17 base
# from a registry unless told otherwise (see README, "Container image").
#
# Needs root (debootstrap), debootstrap, umoci and skopeo (installed here when missing).
set -euo pipefail

SUITE=bookworm
CACHE_ROOT=${SUBRANGE_K8S_CACHE:-$HOME/.cache/subrange}
OUT_DIR=$CACHE_ROOT/images
# Bump when the recipe below changes, so an older cached base is rebuilt.
RECIPE=1
TARBALL=$OUT_DIR/subrange-base-$SUITE-jre17-r$RECIPE.tar
TAG=subrange-base:$SUITE-jre17

log() { echo "build-base: $*" >&2; }

if [ -s "$TARBALL" ]; then
  log "using cached $TARBALL"
  echo "$TARBALL"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
need=()
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
command -v umoci >/dev/null 2>&1 || need+=(umoci)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >&2
fi

# The machine's own Debian mirror: the only package source reachable here, and the one a user's
# apt already trusts.
mirror=$(grep -rhs '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
mirror=${mirror:-$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)}
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d "${TMPDIR:-/tmp}/subrange-base.XXXXXX")
trap '$SUDO rm -rf "$work"' EXIT
mkdir -p "$OUT_DIR"

umoci init --layout "$work/oci" >&2
umoci new --image "$work/oci:base" >&2
$SUDO umoci unpack --image "$work/oci:base" "$work/bundle" >&2

log "debootstrap $SUITE (minbase + openjdk-17-jre-headless) from $mirror"
$SUDO debootstrap --variant=minbase --include=openjdk-17-jre-headless,ca-certificates \
  "$SUITE" "$work/bundle/rootfs" "$mirror" >&2

# Nothing the image needs at run time: package lists and caches, documentation, logs.
root=$work/bundle/rootfs
$SUDO rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
  "$root"/var/log/* "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
  "$root"/tmp/* "$root"/var/tmp/*
# A fixed date for what the build wrote, so rebuilding gives the same files.
# (etc/debian_version keeps the date its package gave it.)
epoch=$(stat -c %Y "$root/etc/debian_version")
$SUDO find "$root" -newermt "@$epoch" -exec touch -h -d "@$epoch" {} + 2>/dev/null || true

$SUDO umoci repack --image "$work/oci:base" "$work/bundle" >&2
umoci config --image "$work/oci:base" --tag "$SUITE-jre17" \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \
  --config.env LANG=C.UTF-8 \
  --config.user 65532:65532 \
  --config.workingdir / \
  --architecture amd64 --os linux --created "$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)" >&2
rm -f "$TARBALL.part"
skopeo copy -q "oci:$work/oci:$SUITE-jre17" "docker-archive:$TARBALL.part:$TAG" >&2
mv "$TARBALL.part" "$TARBALL"
log "built $TARBALL ($(du -h "$TARBALL" | cut -f1))"
echo "$TARBALL"
