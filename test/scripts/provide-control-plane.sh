#!/usr/bin/env bash
# Provides a real kube-apiserver, etcd and kubectl for the end-to-end tests, built only from
# Debian's packages (nothing else is reachable from CI). Idempotent: when the binaries are
# already cached it only prints where they are.
#
#   test/scripts/provide-control-plane.sh          # prints the KUBE_API_TEST_DIR to use
#
# Layout, as io.fabric8:kube-api-test expects it:
#   $SUBRANGE_K8S_CACHE/k8s/1.20.2-linux-amd64/{kube-apiserver,etcd,kubectl}
# and beside them, for the single-node cluster of test/scripts/cluster:
#   kube-controller-manager, kube-scheduler, kubelet, kube-proxy and pause (the pod sandbox's process)
# Diagnostics go to stderr; the only line on stdout is the directory, so callers can do
#   export KUBE_API_TEST_DIR=$(test/scripts/provide-control-plane.sh)
set -euo pipefail

K8S_VERSION=1.20.2
# Debian bookworm ships Kubernetes 1.20.2 as source package version 1.20.5+really1.20.2-*
DEBIAN_SOURCE_VERSION_PREFIX=1.20.5+really1.20.2
# Bump when the build below changes, so caches built by an older recipe are rebuilt.
RECIPE=4
CACHE_ROOT=${SUBRANGE_K8S_CACHE:-$HOME/.cache/subrange}
BIN_DIR=$CACHE_ROOT/k8s/$K8S_VERSION-linux-amd64
BUILD_DIR=$CACHE_ROOT/build

log() { echo "provide-control-plane: $*" >&2; }

# Everything built from the one source tree: the control plane the tests start through
# kube-api-test, and the node parts test/scripts/cluster adds to it.
BUILT=(kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy pause)

have_built() {
  local name
  for name in "${BUILT[@]}"; do [ -x "$BIN_DIR/$name" ] || return 1; done
  [ "$(cat "$BIN_DIR/.recipe" 2>/dev/null)" = "$RECIPE" ]
}

have_all() {
  have_built && [ -x "$BIN_DIR/etcd" ]
}

if have_all; then
  log "using cached binaries in $BIN_DIR"
  echo "$CACHE_ROOT"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

ensure_packages() {
  local need=()
  command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ] || need+=(etcd-server)
  command -v go >/dev/null 2>&1 || [ -x /usr/lib/go/bin/go ] || need+=(golang-go)
  command -v rsync >/dev/null 2>&1 || need+=(rsync)
  command -v make >/dev/null 2>&1 || need+=(make)
  command -v gcc >/dev/null 2>&1 || need+=(gcc)
  [ -f /usr/lib/x86_64-linux-gnu/libc.a ] || need+=(libc6-dev)
  command -v dpkg-source >/dev/null 2>&1 || need+=(dpkg-dev)
  [ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || need+=(golang-github-modern-go-reflect2-dev)
  if [ ! -f "$BUILD_DIR/.source-unpacked" ]; then
    # `apt-get source` needs a deb-src line; add one for bookworm main on the same mirror.
    if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      local mirror
      mirror=$(grep -rhs '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
      mirror=${mirror:-http://deb.debian.org/debian}
      log "adding deb-src for bookworm main from $mirror"
      printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$mirror" | $SUDO tee /etc/apt/sources.list.d/subrange-deb-src.sources >/dev/null
      need+=(__update)
    fi
  fi
  if [ ${#need[@]} -gt 0 ]; then
    local pkgs=("${need[@]/__update/}")
    log "apt-get update; installing:${pkgs[*]:+ }${pkgs[*]:-nothing}"
    $SUDO apt-get update -qq >&2
    # shellcheck disable=SC2068
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ${pkgs[@]} >&2
  fi
}

# Kubernetes 1.20 vendors reflect2 v1.0.1, whose unsafe map iteration faults (SIGSEGV in
# runtime.mapiterinit) when built with Go >= 1.18, as Debian's golang-go is. kube-apiserver
# hits it on every mutating-webhook JSON Patch, so the webhook tests would crash it. Debian's
# reflect2 1.0.2 fixes exactly that with the same API; nothing else is replaced (1.20's own
# json-iterator 1.1.10 stays).
#
# A known quirk of this Go 1.19 build that no library swap here fixes: custom resources with
# an empty string in a string field ("") are refused ("must be of type string: null"). Real
# 1.20 servers accept them; subrange never writes "" into its range objects.
replace_vendored_json_libraries() {
  rsync -a --delete --exclude '*_test.go' --exclude '*_tests/' --exclude 'go.mod' --exclude 'go.sum' \
    /usr/share/gocode/src/github.com/modern-go/reflect2/ vendor/github.com/modern-go/reflect2/
  sed -i -e 's#github.com/modern-go/reflect2 v1\.0\.1#github.com/modern-go/reflect2 v1.0.2#g' go.mod vendor/modules.txt
}

build_apiserver() {
  mkdir -p "$BUILD_DIR"
  cd "$BUILD_DIR"
  if [ ! -f .source-unpacked ]; then
    local version
    version=$(apt-cache showsrc kubernetes | awk '/^Version:/ {print $2}' | grep -F "$DEBIAN_SOURCE_VERSION_PREFIX" | head -n1)
    [ -n "$version" ] || { log "no kubernetes source package $DEBIAN_SOURCE_VERSION_PREFIX-* in apt"; exit 1; }
    log "fetching Debian source package kubernetes=$version"
    apt-get source -qq "kubernetes=$version" >&2
    touch .source-unpacked
  fi
  local tree
  tree=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)
  [ -n "$tree" ] || { log "source tree not found in $BUILD_DIR"; exit 1; }
  tree=$(cd "$tree" && pwd)
  cd "$tree"
  replace_vendored_json_libraries
  mkdir -p .go/src/k8s.io
  ln -sfn "$tree" .go/src/k8s.io/kubernetes
  # kubectl comes from the same tree so client and server versions match exactly.
  log "building ${BUILT[*]} (takes several minutes)"
  local gobin
  gobin=$(dirname "$(readlink -f "$(command -v go || echo /usr/lib/go/bin/go)")")
  ( cd .go/src/k8s.io/kubernetes &&
    PATH=$gobin:$PATH GOPATH=$tree/.go CGO_ENABLED=0 \
      make WHAT="cmd/kube-apiserver cmd/kubectl cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet cmd/kube-proxy" >&2 )
  # The pause image's one process: a small static C program in the same tree.
  mkdir -p _output/pause
  gcc -Os -Wall -Werror -static -DVERSION="v3.4.1-subrange" -o _output/pause/pause \
    "$(find build/pause -name pause.c | head -n1)"
  local name built
  for name in "${BUILT[@]}"; do
    built=$(find "$tree/_output" -type f -name "$name" -perm -u+x | head -n1)
    [ -n "$built" ] || { log "build produced no $name"; exit 1; }
    install -m 0755 "$built" "$BIN_DIR/$name"
  done
  echo "$RECIPE" > "$BIN_DIR/.recipe"
  # The source tree and Go cache are ~2 GB and only needed to build; the binaries are cached.
  cd "$CACHE_ROOT" && rm -rf "$BUILD_DIR"
}

mkdir -p "$BIN_DIR"
ensure_packages
[ -x "$BIN_DIR/etcd" ] || ln -sfn "$(command -v etcd || echo /usr/bin/etcd)" "$BIN_DIR/etcd"
have_built || build_apiserver
have_all || { log "binaries incomplete in $BIN_DIR"; exit 1; }
log "binaries ready in $BIN_DIR"
echo "$CACHE_ROOT"
