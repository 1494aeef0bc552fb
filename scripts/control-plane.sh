#!/usr/bin/env bash
# Builds a Kubernetes control plane -- etcd, kube-apiserver and kube-controller-manager -- from
# source with `go build`, fetching every module through the Go module proxy, into the directory
# layout of the `setup-envtest` tool, and prints that directory on stdout:
#
#     export KUBEBUILDER_ASSETS=$(scripts/control-plane.sh)          # Kubernetes 1.35.4
#     export KUBEBUILDER_ASSETS=$(scripts/control-plane.sh 1.37)     # Kubernetes 1.37.2
#     export KUBEBUILDER_ASSETS=$(scripts/control-plane.sh 1.36.3)   # any release the proxy has
#     scripts/control-plane.sh --node 1.35   # also kube-scheduler, kubelet and kube-proxy
#
# `--node` adds what a node needs (scripts/cluster.sh runs them), built in the same `go build`
# as the control plane so the packages they share compile once.
#
# A run whose binaries are already there only checks them (`--version`) and returns in
# seconds. Progress goes to stderr. No container engine, cluster or binary download needed:
# only Go and the module proxy (GOPROXY).
#
# Variables:
#   OPGEN_ENVTEST_STORE   root of the store (default: the one setup-envtest uses,
#                         ${XDG_DATA_HOME:-~/.local/share}/kubebuilder-envtest); binaries go to
#                         <store>/k8s/<version>-<os>-<arch>/
#   OPGEN_GO_BUILD_CACHE  a Go build cache to build with and keep (default: one of the build's
#                         own, thrown away after it); .ci/run shares one between the tools it builds
set -euo pipefail

# The patch built for a minor version, pinned so that a machine builds once and then always
# finds its cache (the newest patches the Go module proxy served when they were set): the oldest
# and the newest Kubernetes opgen supports. Any other minor gets the newest patch the proxy lists.
declare -A PINNED=([1.35]=1.35.4 [1.37]=1.37.2)
# Built when no version is given: the oldest Kubernetes opgen supports.
readonly DEFAULT_VERSION=1.35

usage() {
    cat >&2 <<'EOF'
usage: scripts/control-plane.sh [--node] [VERSION]

Builds etcd, kube-apiserver and kube-controller-manager for Kubernetes VERSION (default 1.35)
and prints the directory holding them, for KUBEBUILDER_ASSETS. VERSION is MAJOR.MINOR.PATCH,
or MAJOR.MINOR: 1.35 is 1.35.4 and 1.37 is 1.37.2 (pinned), any other minor the newest patch
the Go module proxy serves. --node also builds kube-scheduler, kubelet and kube-proxy into the
same directory (what scripts/cluster.sh needs).
EOF
}

log() { echo "control-plane: $*" >&2; }
die() {
    echo "control-plane: error: $*" >&2
    exit 1
}

binaries=(etcd kube-apiserver kube-controller-manager)
case "${1:-}" in
-h | --help)
    usage
    exit 0
    ;;
--node)
    binaries+=(kube-scheduler kubelet kube-proxy)
    shift
    ;;
esac
[[ $# -le 1 ]] || {
    usage
    exit 2
}
requested=${1:-$DEFAULT_VERSION}
requested=${requested#v}
[[ $requested =~ ^1\.[0-9]+(\.[0-9]+)?$ ]] ||
    die "'$requested' is not a Kubernetes version: give MAJOR.MINOR (1.35) or MAJOR.MINOR.PATCH (1.35.4)"

command -v go >/dev/null 2>&1 ||
    die "the Go toolchain ('go') is not on PATH: install Go 1.24 or newer; the control plane is built from source"

# Never let a module's `toolchain` line start a toolchain download: build with the Go that is
# installed, or say clearly that it is too old.
export GOTOOLCHAIN=local
# Static binaries, no C compiler needed, as the Kubernetes release builds them.
export CGO_ENABLED=0

# MAJOR.MINOR → the newest released patch the proxy lists (pre-releases excluded).
resolve_version() {
    local minor=$1 versions newest
    versions=$(go list -m -versions k8s.io/kubernetes) ||
        die "cannot list the versions of k8s.io/kubernetes: is the Go module proxy (GOPROXY=$(go env GOPROXY)) reachable?"
    newest=$(tr ' ' '\n' <<<"$versions" | grep -E "^v${minor//./\\.}\.[0-9]+$" | sort -V | tail -n 1 || true)
    [[ -n $newest ]] || die "the Go module proxy serves no release of Kubernetes $minor"
    echo "${newest#v}"
}

if [[ -n ${PINNED[$requested]:-} ]]; then
    version=${PINNED[$requested]}
elif [[ $requested =~ ^[0-9]+\.[0-9]+$ ]]; then
    version=$(resolve_version "$requested")
    log "Kubernetes $requested: newest patch is $version"
else
    version=$requested
fi
minor=${version#*.}
minor=${minor%%.*}

goos=$(go env GOOS)
goarch=$(go env GOARCH)
store=${OPGEN_ENVTEST_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/kubebuilder-envtest}
assets="$store/k8s/$version-$goos-$goarch"

# Whether `binary` in the assets directory runs and reports the version it should.
binary_ok() {
    local binary=$1 output
    [[ -x "$assets/$binary" ]] || return 1
    output=$("$assets/$binary" --version 2>&1) || return 1
    case $binary in
    etcd) [[ $output == *"etcd Version:"* ]] ;;
    *) [[ $output == *"Kubernetes v$version"* ]] ;;
    esac
}

missing() {
    local binary
    for binary in "${binaries[@]}"; do
        binary_ok "$binary" || echo "$binary"
    done
}

# Parallel callers (test binaries, CI steps) wait for one build instead of racing it. The lock
# lives outside k8s/, whose entries setup-envtest reads as releases.
mkdir -p "$store"
exec 9>"$store/.opgen-$version-$goos-$goarch.lock"
if ! flock --nonblock 9; then
    log "waiting for another run of this script (building or checking $assets)"
    flock 9
fi

todo=$(missing)
if [[ -z $todo ]]; then
    log "Kubernetes $version control plane found in $assets"
    echo "$assets"
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/opgen-control-plane.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS
# A build cache of its own, thrown away with the work directory, unless the caller shares one:
# the compiled packages of one release take gigabytes, and a machine builds each release once.
# The module cache stays shared, so a second release downloads only what changed.
export GOCACHE="${OPGEN_GO_BUILD_CACHE:-$work/go-build}"
# The binaries are stripped (`-s -w`), so the compiler need not write the debug information the
# linker would drop: 7 % less CPU for a cold build (measured on promtool). The tests' builds of
# helm and of OLM's validator use the same flags, so a shared cache serves them the packages
# these builds compiled (tests/common/go_tool.rs).
readonly GCFLAGS=all=-dwarf=false

# The module file of k8s.io/kubernetes for this release, from the module cache (downloaded
# through the proxy if needed).
log "fetching k8s.io/kubernetes v$version"
download=$(go mod download -json "k8s.io/kubernetes@v$version" 2>&1) ||
    die "cannot download k8s.io/kubernetes v$version through the Go module proxy (is it a release? see 'go list -m -versions k8s.io/kubernetes'): $download"
kubernetes_mod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$download")
[[ -f $kubernetes_mod ]] || die "'go mod download' named no go.mod for k8s.io/kubernetes v$version: $download"

# `module_line KEY`: the first go.mod line that starts with KEY, e.g. `go 1.24.0`.
module_line() { grep -m 1 -E "^$1 " "$kubernetes_mod" || true; }
# The version of a module required by k8s.io/kubernetes.
required_version() { awk -v m="$1" '$1 == m { print $2; exit }' "$kubernetes_mod"; }

# Kubernetes' go.mod replaces its staging modules (k8s.io/api, k8s.io/client-go, ...) with
# directories of its own repository; replace directives only hold in the main module, so the
# wrapper module pins each of them to the release it was published as: v0.<minor>.<patch>.
staging_replacements() {
    local staging_version="v0.${version#*.}"
    sed -n 's|^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*$|\1|p' "$kubernetes_mod" |
        while read -r module; do
            echo "	$module => $module $staging_version"
        done
}

build_kubernetes() {
    local dir="$work/kubernetes" binaries=("$@") packages=() binary pkg flags
    mkdir -p "$dir"
    {
        echo "module opgen.invalid/control-plane/kubernetes"
        echo
        module_line go
        module_line godebug
        echo
        echo "require k8s.io/kubernetes v$version"
        echo
        echo "replace ("
        staging_replacements
        echo ")"
    } >"$dir/go.mod"
    for binary in "${binaries[@]}"; do
        packages+=("k8s.io/kubernetes/cmd/$binary")
    done
    # What Kubernetes' own build stamps in, so that `--version` and the /version endpoint
    # report the release.
    flags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        flags+=" -X $pkg.gitVersion=v$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
        flags+=" -X $pkg.gitTreeState=clean"
    done
    log "building ${binaries[*]} (Kubernetes v$version); a cold build takes a long time"
    (cd "$dir" && go build -mod=mod -trimpath -gcflags="$GCFLAGS" -ldflags="$flags" -o "$work/bin/" "${packages[@]}") >&2 ||
        die "building ${binaries[*]} from k8s.io/kubernetes v$version failed (output above)"
}

build_etcd() {
    local dir="$work/etcd" etcd_version
    etcd_version=$(required_version go.etcd.io/etcd/server/v3)
    [[ -n $etcd_version ]] || etcd_version=$(required_version go.etcd.io/etcd/api/v3)
    [[ -n $etcd_version ]] || die "k8s.io/kubernetes v$version names no etcd version in its go.mod"
    mkdir -p "$dir"
    cat >"$dir/main.go" <<'EOF'
// Command etcd is etcd's server, built from its published module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
EOF
    {
        echo "module opgen.invalid/control-plane/etcd"
        echo
        module_line go
        echo
        echo "require go.etcd.io/etcd/server/v3 $etcd_version"
    } >"$dir/go.mod"
    log "building etcd $etcd_version (the version Kubernetes v$version is tested with)"
    (cd "$dir" && go build -mod=mod -trimpath -gcflags="$GCFLAGS" -ldflags="-s -w" -o "$work/bin/etcd" .) >&2 ||
        die "building etcd $etcd_version failed (output above)"
}

log "building into $assets: $(echo $todo)"
kubernetes_binaries=()
for binary in $todo; do
    case $binary in
    etcd) build_etcd ;;
    *) kubernetes_binaries+=("$binary") ;;
    esac
done
[[ ${#kubernetes_binaries[@]} -eq 0 ]] || build_kubernetes "${kubernetes_binaries[@]}"

# Moved in only once built, so an interrupted build never leaves a half-written binary.
mkdir -p "$assets"
for binary in $todo; do
    install -m 0755 "$work/bin/$binary" "$assets/$binary.new"
    mv -f "$assets/$binary.new" "$assets/$binary"
done
still_missing=$(missing)
[[ -z $still_missing ]] || die "built, but these do not run or report Kubernetes v$version: $(echo $still_missing)"
log "built in $((SECONDS - started)) s: $assets"
echo "$assets"
