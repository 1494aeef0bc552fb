#!/usr/bin/env bash
# Measures what a generated project costs its user, for the opgen binary given: the lines of
# Rust it holds and how many of them the user owns, a cold and a warm `cargo test`, and the
# `cargo build` after a one-line edit of a controller. docs/performance.md reports its output
# for two releases, measured one after the other on one machine.
#
# usage: scripts/measure-project.sh OPGEN WORKDIR
#   OPGEN    the opgen binary to measure
#   WORKDIR  an empty directory; the project and its Cargo target go there
# The integration tests need a control plane: KUBEBUILDER_ASSETS (scripts/control-plane.sh 1.35).
set -euo pipefail
opgen=$(realpath "${1:?usage: scripts/measure-project.sh OPGEN WORKDIR}")
work=${2:?usage: scripts/measure-project.sh OPGEN WORKDIR}
: "${KUBEBUILDER_ASSETS:?set KUBEBUILDER_ASSETS to a control plane: scripts/control-plane.sh 1.35}"
mkdir -p "$work"
work=$(realpath "$work")
if [ -n "$(ls -A "$work")" ]; then
    echo "error: $work is not empty: give an empty directory, so that the build is cold" >&2
    exit 1
fi

cd "$work"
export NO_COLOR=1 CARGO_TARGET_DIR="$work/target" CARGO_TERM_PROGRESS_WHEN=never
"$opgen" --quiet init demo --domain example.com
cd demo
"$opgen" --quiet create api --group db --version v1alpha1 --kind Widget
"$opgen" --quiet create api --group db --version v1alpha1 --kind MySQLCluster \
    --image mysql:8.0 --workload statefulset --port 3306
"$opgen" --quiet create webhook --group db --version v1alpha1 --kind Widget --defaulting --validation
"$opgen" --quiet generate manifests

# Every .rs file of the project, and the scaffolded ones (no "DO NOT EDIT" header), which
# are the user's.
lines() { if [ $# -gt 0 ]; then cat "$@" | wc -l; else echo 0; fi; }
mapfile -t all < <(find . -name '*.rs' -not -path './vendor/*' | sort)
mapfile -t owned < <(for f in "${all[@]}"; do head -1 "$f" | grep -q 'DO NOT EDIT' || echo "$f"; done)
mapfile -t vendored < <(find vendor -name '*.rs' 2>/dev/null | sort)
echo "lines of Rust in the project's crates: $(lines "${all[@]}") (${#all[@]} files)"
echo "of which the user owns: $(lines "${owned[@]}") (${#owned[@]} files)"
echo "lines of Rust in vendor/: $(lines "${vendored[@]}")"

seconds() { local start=$SECONDS; "$@" >/dev/null 2>&1 || { echo "error: $* failed" >&2; exit 1; }; echo $((SECONDS - start)); }
echo "cargo test, cold: $(seconds cargo test) s"
tests=$(cargo test 2>&1 | awk '/^test result:/ { n += $4 } END { print n }')
echo "cargo test, warm: $(seconds cargo test) s ($tests tests)"

# One line of the plain kind's controller: a message in its log.
controller=src/controllers/db/widget.rs
grep -q 'reconciled' "$controller" || { echo "error: $controller has no line to edit" >&2; exit 1; }
cargo build >/dev/null 2>&1
sed -i '0,/reconciled/s//reconciled again/' "$controller"
start=$(date +%s.%N)
cargo build >/dev/null 2>&1
end=$(date +%s.%N)
echo "cargo build after a one-line controller edit: $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }') s"
