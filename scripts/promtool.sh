#!/usr/bin/env bash
# Builds Prometheus' `promtool` from source with `go build`, fetching every module through the
# Go module proxy, and prints the path of the binary on stdout:
#
#     PROMTOOL=$(scripts/promtool.sh)
#     "$PROMTOOL" check rules config/prometheus/promtool/rules.yaml
#
# The version is pinned (Prometheus 3.16.0, published as the Go module
# github.com/prometheus/prometheus v0.316.0), so a machine builds it once and then always finds
# its cache: a run whose binary is already there only checks it (`--version`) and returns in
# seconds. Progress goes to stderr. Only Go and the module proxy (GOPROXY) are needed.
#
# Variables:
#   OPGEN_TOOLS_STORE   where the binary is kept (default ${XDG_DATA_HOME:-~/.local/share}/opgen-tools);
#                       it goes to <store>/promtool/<version>-<os>-<arch>/promtool
#   OPGEN_GO_BUILD_CACHE  a Go build cache to build with and keep (default: one of the build's
#                         own, thrown away after it)
set -euo pipefail

readonly MODULE=github.com/prometheus/prometheus
readonly MODULE_VERSION=v0.316.0
# What `promtool --version` reports for that module version.
readonly RELEASE=3.16.0

log() { echo "promtool: $*" >&2; }
die() {
    echo "promtool: error: $*" >&2
    exit 1
}

case "${1:-}" in
-h | --help)
    echo "usage: scripts/promtool.sh   (builds promtool $RELEASE once and prints its path)" >&2
    exit 0
    ;;
esac
[[ $# -eq 0 ]] || die "takes no arguments (see --help)"

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
    export PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 ||
    die "the Go toolchain ('go') is not on PATH: install Go 1.26.7 or newer; promtool is built from source"

# Never let a module's `toolchain` line start a toolchain download: build with the Go that is
# installed, or say clearly that it is too old.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export CGO_ENABLED=0

goos=$(go env GOOS)
goarch=$(go env GOARCH)
store=${OPGEN_TOOLS_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/opgen-tools}
dir="$store/promtool/$RELEASE-$goos-$goarch"
binary="$dir/promtool"

binary_ok() {
    [[ -x $binary ]] && "$binary" --version 2>&1 | grep -q "version $RELEASE"
}

# Parallel callers (test binaries, CI steps) wait for one build instead of racing it.
mkdir -p "$store"
exec 9>"$store/.promtool-$RELEASE-$goos-$goarch.lock"
if ! flock --nonblock 9; then
    log "waiting for another run of this script (building or checking $binary)"
    flock 9
fi

if binary_ok; then
    log "promtool $RELEASE found in $dir"
    echo "$binary"
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/opgen-promtool.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS
export GOCACHE="${OPGEN_GO_BUILD_CACHE:-$work/go-build}"

log "fetching $MODULE $MODULE_VERSION"
download=$(go mod download -json "$MODULE@$MODULE_VERSION" 2>&1) ||
    die "cannot download $MODULE $MODULE_VERSION through the Go module proxy (GOPROXY=$(go env GOPROXY)): $download"
module_file=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$download")
[[ -f $module_file ]] || die "'go mod download' named no go.mod for $MODULE $MODULE_VERSION: $download"
go_line=$(grep -m 1 -E '^go ' "$module_file") || die "$MODULE $MODULE_VERSION's go.mod has no go line"
needed=${go_line#go }
have=$(go env GOVERSION)
have=${have#go}
if [[ $(printf '%s\n%s\n' "$needed" "$have" | sort -V | head -n 1) != "$needed" ]]; then
    die "promtool $RELEASE needs Go $needed or newer, and this Go is $have: install a newer Go, or export GOTOOLCHAIN=go$needed to have the go command fetch that toolchain through the module proxy"
fi

mkdir -p "$work/module"
{
    echo "module opgen.invalid/promtool"
    echo
    echo "$go_line"
    echo
    echo "require $MODULE $MODULE_VERSION"
} >"$work/module/go.mod"
# The version promtool reports, as Prometheus' own build stamps it.
flags="-s -w -X github.com/prometheus/common/version.Version=$RELEASE"
# `remove_all_sd` leaves out the service discoveries (cloud providers' SDKs among them), which
# only `promtool check service-discovery` uses: a fifth fewer packages to compile, and the
# checks of rules and their unit tests are the same code.
log "building promtool $RELEASE; a cold build takes several minutes"
# Stripped, so without the debug information the compiler would write and the linker drop (7 %
# less CPU cold), as scripts/control-plane.sh builds.
(cd "$work/module" && go build -mod=mod -trimpath -gcflags=all=-dwarf=false -tags remove_all_sd -ldflags="$flags" -o "$work/promtool" "$MODULE/cmd/promtool") >&2 ||
    die "building promtool from $MODULE $MODULE_VERSION failed (output above)"

# Moved in only once built, so an interrupted build never leaves a half-written binary.
mkdir -p "$dir"
install -m 0755 "$work/promtool" "$binary.new"
mv -f "$binary.new" "$binary"
binary_ok || die "built, but $binary does not run or report version $RELEASE"
log "built in $((SECONDS - started)) s: $binary"
echo "$binary"
