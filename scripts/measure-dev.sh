#!/usr/bin/env bash
# Measures `opgen dev` on a new project: the cold start (nothing built) and the warm start to
# the samples applied, and the time from a saved controller edit to the restarted manager
# ready, as `opgen dev` reports it, for three edits. docs/performance.md reports its output.
#
# usage: scripts/measure-dev.sh OPGEN WORKDIR
#   OPGEN    the opgen binary to measure
#   WORKDIR  an empty directory; the project and its Cargo target go there
# Needs a control plane: KUBEBUILDER_ASSETS (scripts/control-plane.sh 1.35).
set -euo pipefail
opgen=$(realpath "${1:?usage: scripts/measure-dev.sh OPGEN WORKDIR}")
work=${2:?usage: scripts/measure-dev.sh OPGEN WORKDIR}
: "${KUBEBUILDER_ASSETS:?set KUBEBUILDER_ASSETS to a control plane: scripts/control-plane.sh 1.35}"
mkdir -p "$work"
work=$(realpath "$work")
export NO_COLOR=1 CARGO_TARGET_DIR="$work/target"
cd "$work"
if [ -d demo ] && [ -d target ]; then
    # An earlier run's project and build: measure the warm figures again.
    cold=false
    echo "$work holds an earlier run's project: the cold start is not measured"
elif [ -n "$(ls -A)" ]; then
    echo "error: $work is not empty: give an empty directory, so that the first build is cold" >&2
    exit 1
else
    cold=true
    "$opgen" --quiet init demo --domain example.com
    (
        cd demo
        "$opgen" --quiet create api --group db --version v1alpha1 --kind Widget
        "$opgen" --quiet create api --group cache --version v1alpha1 --kind Memcached \
            --image memcached:1.6.26-alpine --port 11211
    )
fi
cd demo
controller=src/controllers/db/widget.rs
output="$work/dev.log"

# Waits until the session's output has more than $2 lines matching $1; prints the last one.
wait_for() {
    local pattern=$1 seen=$2 deadline=$((SECONDS + ${3:-900}))
    while [ "$(grep -c -- "$pattern" "$output" || true)" -le "$seen" ]; do
        if [ $SECONDS -ge $deadline ] || ! kill -0 "$dev" 2>/dev/null; then
            echo "error: no '$pattern' from opgen dev; its output:" >&2
            tail -30 "$output" >&2
            exit 1
        fi
        sleep 0.2
    done
    grep -- "$pattern" "$output" | tail -1
}
session() {
    : >"$output"
    "$opgen" dev >"$output" 2>&1 &
    dev=$!
    local start=$SECONDS
    # The cold build of kube and its dependencies takes many minutes on a busy machine.
    wait_for "Applied config/samples" 0 3600 >/dev/null
    echo "$1: opgen dev to the samples applied: $((SECONDS - start)) s"
}
stop() { kill -INT "$dev"; wait "$dev" || true; }
trap 'kill -INT "$dev" 2>/dev/null || true' EXIT

if $cold; then
    session "cold (nothing built)"
    stop
fi
session "warm (everything built)"
# The sample's Ready message, as the manager wrote it last.
message() {
    kubectl --kubeconfig target/opgen-dev/cluster/admin.kubeconfig get widget widget-sample \
        -n default -o 'jsonpath={.status.conditions[?(@.type=="Ready")].message}' 2>/dev/null || true
}
for edit in 1 2 3; do
    seen=$(grep -c "after the change" "$output" || true)
    start=$(date +%s.%N)
    # The message the controller writes into the Ready condition.
    sed -i "s/let message = \"Widget is reconciled[^\"]*\"/let message = \"Widget is reconciled (edit $edit)\"/" "$controller"
    grep -q "reconciled (edit $edit)" "$controller" || { echo "error: $controller has no message to edit" >&2; exit 1; }
    line=$(wait_for "after the change" "$seen")
    until message | grep -q "(edit $edit)"; do sleep 0.1; done
    end=$(date +%s.%N)
    echo "edit $edit: the manager ready ${line##*its start, }, the sample's status showing the edit $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }') s after the save" | tr -d ')'
done
grep -- "Built the manager" "$output" | tail -3 | sed 's/^ */incremental build: /'
stop
