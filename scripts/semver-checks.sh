#!/usr/bin/env bash
# Builds cargo-semver-checks from crates.io with `cargo install --locked`, once, and prints the
# path of the binary on stdout:
#
#     SEMVER_CHECKS=$(scripts/semver-checks.sh)
#     "$SEMVER_CHECKS" semver-checks check-release -p opgen-runtime --baseline-root <dir>
#
# The version is pinned: 0.51.0 reads the rustdoc JSON of format 57, which Rust 1.95 writes
# (and 60 and 61, of later releases). A machine builds it once and then always finds its
# cache: a run whose binary is already there only checks it (`--version`) and returns at once.
# Progress goes to stderr. Only cargo and crates.io are needed.
#
# Variables:
#   OPGEN_TOOLS_STORE   where the binary is kept (default ${XDG_DATA_HOME:-~/.local/share}/opgen-tools);
#                       it goes to <store>/cargo-semver-checks/<version>/bin/cargo-semver-checks
set -euo pipefail

readonly VERSION=0.51.0

log() { echo "semver-checks: $*" >&2; }
die() {
    echo "semver-checks: error: $*" >&2
    exit 1
}

case "${1:-}" in
-h | --help)
    echo "usage: scripts/semver-checks.sh   (builds cargo-semver-checks $VERSION once and prints its path)" >&2
    exit 0
    ;;
esac
[[ $# -eq 0 ]] || die "takes no arguments (see --help)"

command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH: cargo-semver-checks is built from crates.io with it"

store=${OPGEN_TOOLS_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/opgen-tools}
root="$store/cargo-semver-checks/$VERSION"
binary="$root/bin/cargo-semver-checks"

binary_ok() {
    [[ -x $binary ]] && "$binary" semver-checks --version 2>&1 | grep -q "$VERSION"
}

# Parallel callers (test binaries, CI steps) wait for one build instead of racing it.
mkdir -p "$store"
exec 9>"$store/.cargo-semver-checks-$VERSION.lock"
if ! flock --nonblock 9; then
    log "waiting for another run of this script (building or checking $binary)"
    flock 9
fi

if binary_ok; then
    log "cargo-semver-checks $VERSION found in $root"
    echo "$binary"
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/opgen-semver-checks.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS
log "building cargo-semver-checks $VERSION from crates.io; a cold build takes several minutes"
# Into a root of its own beside the final one, moved in only once built, so an interrupted
# build never leaves a half-installed binary; its own target directory, so that no
# CARGO_TARGET_DIR of the caller's is filled.
# Its release profile links with LTO into one codegen unit and optimizes fully, which makes a
# smaller and faster binary at the cost of minutes of build: the tests run it three times, on
# one crate, where the unoptimized binary takes seconds too. Built without, it takes 5 CPU-minutes
# instead of 11 (opt-level 1 took 11 too).
CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
    cargo install --locked --quiet --version "$VERSION" --root "$work/root" \
    --target-dir "$work/target" cargo-semver-checks >&2 ||
    die "building cargo-semver-checks $VERSION failed (output above)"
mkdir -p "$root/bin"
install -m 0755 "$work/root/bin/cargo-semver-checks" "$binary.new"
mv -f "$binary.new" "$binary"
binary_ok || die "built, but $binary does not run or report version $VERSION"
log "built in $((SECONDS - started)) s: $binary"
echo "$binary"
