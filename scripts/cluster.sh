#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, for tests that need pods to really run:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd, a kubelet and
# kube-proxy, all started from the binaries scripts/control-plane.sh builds (`--node`).
#
#     export KUBECONFIG=$(scripts/cluster.sh up)    # Kubernetes 1.35 (or: up 1.37)
#     scripts/cluster.sh load controller:v1        # an image built by buildah or podman
#     scripts/cluster.sh down                      # stops and removes everything
#
# Nothing is pulled: the node's pause image is built here from a few lines of C, and images
# reach the node only through `load`. Nothing routes out: the pods sit on a bridge of their own
# (opgen0, 10.244.0.0/24, the node at 10.244.0.1) with routes to the pod and Service networks
# only, and the forwarding rules drop whatever tries to leave it.
#
# Everything the cluster makes lives under one state directory (certificates, etcd's data,
# containerd's root, state and socket, the kubelet's root, logs, pid files), so that `down`
# finds it all from there, also after a killed run. Progress goes to stderr; `up` prints the
# admin kubeconfig on stdout.
#
# Variables:
#   OPGEN_CLUSTER_DIR     the state directory (default /var/lib/opgen-cluster)
#   OPGEN_ENVTEST_STORE   where scripts/control-plane.sh keeps the binaries (see there)
set -euo pipefail

readonly DEFAULT_VERSION=1.35
readonly STATE=${OPGEN_CLUSTER_DIR:-/var/lib/opgen-cluster}
# The pause image is cached across clusters: `down` removes the state directory.
readonly CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/opgen-cluster
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPTS

# The network. The node's address is the bridge's, so that pods, the host and the `kubernetes`
# Service all reach the API server at one address that exists only on this machine.
readonly BRIDGE=opgen0
readonly POD_CIDR=10.244.0.0/24
readonly NODE_IP=10.244.0.1
readonly SERVICE_CIDR=10.96.0.0/24
readonly KUBERNETES_SERVICE_IP=10.96.0.1
readonly NODE_NAME=opgen-node
# Fixed and unusual, so that a default installation of any of these components elsewhere on
# the machine never collides with them; `up` checks each is free.
readonly API_PORT=16443 ETCD_PORT=12379 ETCD_PEER_PORT=12380 CONTROLLER_MANAGER_PORT=16257
readonly SCHEDULER_PORT=16259 KUBELET_PORT=16250 KUBELET_HEALTHZ_PORT=16248
readonly PROXY_HEALTHZ_PORT=16256 PROXY_METRICS_PORT=16249
# Started in this order, stopped in the reverse one.
readonly COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)
# Kernel settings the kubelet (vm.*, kernel.*) or the cluster (ip_forward) changes: saved at
# `up`, restored at `down`.
readonly SYSCTLS=(net/ipv4/ip_forward net/ipv4/conf/all/route_localnet vm/overcommit_memory
    vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes)
# Debian packages the node needs, by a command each provides.
declare -A PACKAGES=([containerd]=containerd [runc]=runc [iptables]=iptables [conntrack]=conntrack
    [buildah]=buildah [openssl]=openssl [gcc]=gcc [ss]=iproute2 [busybox]=busybox-static)
readonly CNI_BIN=/usr/lib/cni

usage() {
    cat >&2 <<'EOF'
usage: scripts/cluster.sh up [VERSION] | load IMAGE | down | status

  up [VERSION]   starts a one-node cluster of Kubernetes VERSION (default 1.35), or finds the
                 one running, waits until its node is Ready and prints its admin kubeconfig
  load IMAGE     copies IMAGE from buildah's/podman's storage into the node's containerd, under
                 its name and the name a pod spec resolves it to (controller:v1 is also
                 docker.io/library/controller:v1)
  down           stops the cluster and removes everything it made
  status         says whether a cluster runs, and its kubeconfig

State: OPGEN_CLUSTER_DIR (default /var/lib/opgen-cluster). Needs root, the cgroup controllers
mounted, overlayfs; installs containerd, runc, iptables, buildah and the CNI plugins
with apt-get when missing.
EOF
}

log() { echo "cluster: $*" >&2; }
die() {
    echo "cluster: error: $*" >&2
    exit 1
}

# The process of a component, if it runs: its pid file names a live process whose command
# line mentions the state directory (a recycled pid never does).
pid_of() {
    local pid
    pid=$(cat "$STATE/pids/$1.pid" 2>/dev/null) || return 1
    [[ -n $pid ]] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$STATE" || return 1
    echo "$pid"
}

kubectl_admin() { kubectl --kubeconfig "$STATE/admin.kubeconfig" --request-timeout 10s "$@"; }

log_tail() { tail -n 30 "$STATE/logs/$1.log" 2>/dev/null | sed "s/^/  $1| /" >&2 || true; }

# Every component of a healthy cluster runs, the API server answers and the node is Ready.
healthy() {
    local component
    for component in "${COMPONENTS[@]}"; do
        pid_of "$component" >/dev/null || return 1
    done
    [[ $(kubectl_admin get node "$NODE_NAME" \
        -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# ---------------------------------------------------------------------------------------------
# Teardown: from the state directory and the kernel's view only, never from what this run
# remembers, so that it also cleans up after a killed `up`.

# `stop_processes NAME...`: SIGTERM to each that runs, then up to 10 s for all of them to exit,
# then SIGKILL for the rest. Together, since each takes seconds to shut down on its own.
stop_processes() {
    local name pid pids=() i alive
    for name in "$@"; do
        pid=$(pid_of "$name") || continue
        kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    done
    for ((i = 0; i < 40; i++)); do
        alive=0
        for pid in "${pids[@]}"; do
            [[ -d /proc/$pid ]] && alive=1
        done
        ((alive)) || return 0
        sleep 0.25
    done
    for pid in "${pids[@]}"; do
        [[ -d /proc/$pid ]] || continue
        log "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -d' ' -f1) did not stop within 10 s of SIGTERM: killing it"
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# The cgroup every pod lives in (the kubelet's cgroupRoot), under each mounted v1 controller.
cgroup_dirs() {
    local dir
    for dir in /sys/fs/cgroup/*/opgen-cluster /sys/fs/cgroup/opgen-cluster; do
        [[ -d $dir ]] && echo "$dir"
    done
    return 0
}

# Kills every process of every container: they are the pods' cgroups' members, and neither
# containerd nor the kubelet may be alive to do it after a killed run.
kill_containers() {
    local dir procs i
    for ((i = 0; i < 20; i++)); do
        procs=$(cgroup_dirs | while read -r dir; do
            find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null
        done | sort -u)
        [[ -n $procs ]] || return 0
        # shellcheck disable=SC2086 # one pid a word
        kill -KILL $procs 2>/dev/null || true
        sleep 0.25
    done
    log "warning: processes remain in the pods' cgroups: ${procs//$'\n'/ }"
}

remove_cgroups() {
    local dir
    cgroup_dirs | while read -r dir; do
        find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
}

# The network namespaces of the pods: containerd 1.6 keeps them in /var/run/netns (not under
# its own state). A running sandbox's bundle in the state directory names its own, and the
# host end of each pod's veth on the bridge names the namespace of the other end. Read before
# the pods are killed: containerd removes a bundle when its sandbox exits.
pod_netns() {
    {
        find "$STATE/containerd" -path '*io.containerd.runtime.v2.task*' -name config.json \
            -exec grep -oh '/var/run/netns/cni-[0-9a-f-]*' {} + 2>/dev/null || true
        ip -o link show master "$BRIDGE" 2>/dev/null | grep -o 'link-netns cni-[0-9a-f-]*' |
            sed 's|^link-netns |/var/run/netns/|' || true
    } | sort -u
}

# The pods' sandboxes, by id: their CNI results are cached outside the state directory.
pod_sandboxes() {
    find "$STATE/containerd" -path '*io.containerd.grpc.v1.cri/sandboxes/*' -maxdepth 4 -mindepth 4 \
        -type d -printf '%f\n' 2>/dev/null | sort -u || true
}

# Directories outside the state directory that containerd and the CNI plugins make (the netns
# mounts, the shims' sockets, the CNI result cache): removed at `down` if `up` found them
# missing and they are empty by then.
readonly SHARED_DIRS=(/var/run/netns /run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni)

unmount_state() {
    local mountpoint
    # Deepest first; lazily as a last resort, since a busy mount must not stop the teardown.
    awk -v root="$STATE" 'index($5, root "/") == 1 || $5 == root { print $5 }' /proc/self/mountinfo |
        sort -r -u | while read -r mountpoint; do
            umount "$mountpoint" 2>/dev/null || umount -l "$mountpoint" 2>/dev/null ||
                log "warning: cannot unmount $mountpoint"
        done
}

# The KUBE-* chains kube-proxy and the kubelet make, and this script's OPGEN-* chain: every
# rule jumping to them from a built-in chain, then the chains themselves.
remove_chains() {
    local tool=$1 table rule chain
    command -v "$tool" >/dev/null 2>&1 || return 0
    for table in filter nat mangle raw; do
        "$tool" -t "$table" -S >/dev/null 2>&1 || continue
        { "$tool" -t "$table" -S | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j (KUBE|OPGEN)-' || true; } |
            while read -r rule; do
                # The rule as iptables printed it, word by word (its comments are quoted).
                eval "$tool -t $table -D ${rule#-A }" 2>/dev/null || true
            done
        for chain in $("$tool" -t "$table" -S | sed -n 's/^-N \(\(KUBE\|OPGEN\)-[^ ]*\)$/\1/p'); do
            "$tool" -t "$table" -F "$chain" 2>/dev/null || true
        done
        for chain in $("$tool" -t "$table" -S | sed -n 's/^-N \(\(KUBE\|OPGEN\)-[^ ]*\)$/\1/p'); do
            "$tool" -t "$table" -X "$chain" 2>/dev/null || true
        done
    done
}

restore_sysctls() {
    local line key
    [[ -f $STATE/sysctls ]] || return 0
    while read -r key line; do
        echo "$line" >"/proc/sys/$key" 2>/dev/null || log "warning: cannot restore $key to $line"
    done <"$STATE/sysctls"
}

shim_pids() { pgrep -f -- "-address $STATE/containerd/" || true; }

# The sockets the shims listen on (/run/containerd/s/<hash>): a killed shim leaves its own.
shim_sockets() {
    local pid
    for pid in $(shim_pids); do
        ss -Hxlp | grep -F "pid=$pid," | awk '{ print $5 }'
    done
}

teardown() {
    local netns link assets i socket
    [[ -d $STATE ]] || return 0
    local -a netns_list sandboxes
    mapfile -t netns_list < <(pod_netns)
    mapfile -t sandboxes < <(pod_sandboxes)
    # The pods go first: the kubelet would restart them, containerd's shims outlive it.
    stop_processes kube-proxy kubelet
    kill_containers
    # containerd deletes the tasks of the killed containers, and their shims exit.
    for ((i = 0; i < 20; i++)); do
        [[ -n $(shim_pids) ]] || break
        sleep 0.25
    done
    stop_processes containerd kube-scheduler kube-controller-manager kube-apiserver
    stop_processes etcd
    # Any shim left (containerd was gone already) is killed, and its socket removed.
    local -a sockets
    mapfile -t sockets < <(shim_sockets)
    pkill -KILL -f -- "-address $STATE/containerd/" 2>/dev/null || true
    for socket in "${sockets[@]}"; do
        [[ $socket == /run/containerd/s/* ]] && rm -f "$socket"
    done
    unmount_state
    for netns in "${netns_list[@]}"; do
        [[ -n $netns ]] || continue
        umount "$netns" 2>/dev/null || umount -l "$netns" 2>/dev/null || true
        rm -f "$netns"
    done
    # A veth whose pod namespace is gone has gone with it; any other still on the bridge goes.
    for link in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
        ip link delete "$link" 2>/dev/null || true
    done
    ip link delete "$BRIDGE" 2>/dev/null || true
    assets=$(cat "$STATE/assets" 2>/dev/null || true)
    if [[ -x $assets/kube-proxy ]]; then
        "$assets/kube-proxy" --cleanup >>"$STATE/logs/kube-proxy-cleanup.log" 2>&1 || true
    fi
    remove_chains iptables
    remove_chains ip6tables
    restore_sysctls
    local sandbox dir
    for sandbox in "${sandboxes[@]}"; do
        [[ -n $sandbox ]] && rm -f /var/lib/cni/results/*-"$sandbox"-*
    done
    for dir in "${SHARED_DIRS[@]}"; do
        if grep -qxF "$dir" "$STATE/made-dirs" 2>/dev/null; then rmdir "$dir" 2>/dev/null || true; fi
    done
    remove_cgroups
    # Mounts are gone, so this removes nothing outside the state directory.
    if ! awk -v root="$STATE" 'index($5, root "/") == 1' /proc/self/mountinfo | grep -q .; then
        rm -rf "$STATE"
    else
        log "warning: mounts remain under $STATE; leaving it:"
        awk -v root="$STATE" 'index($5, root "/") == 1 { print "  " $5 }' /proc/self/mountinfo >&2
    fi
}

# ---------------------------------------------------------------------------------------------
# Bringing it up.

# Root, cgroups and overlayfs: what no package provides. Then the packages.
check_machine() {
    [[ $(id -u) -eq 0 ]] ||
        die "the cluster needs root (containerd, the kubelet, a bridge and iptables rules): run it with sudo"
    [[ $(uname -s) == Linux ]] || die "the cluster runs on Linux only"
    if [[ ! -f /sys/fs/cgroup/cgroup.controllers ]]; then
        local controller
        for controller in cpu cpuacct cpuset memory pids devices freezer; do
            [[ -d /sys/fs/cgroup/$controller ]] ||
                die "no cgroup v1 '$controller' controller mounted at /sys/fs/cgroup/$controller (nor cgroup v2 at /sys/fs/cgroup): mount the cgroup hierarchies (e.g. the cgroupfs-mount package) and retry"
        done
    fi
    grep -qw overlay /proc/filesystems ||
        die "overlayfs is not in /proc/filesystems: containerd's snapshotter needs it; load the 'overlay' module (modprobe overlay) or use a kernel with it built in"
}

install_packages() {
    local command missing=()
    for command in "${!PACKAGES[@]}"; do
        command -v "$command" >/dev/null 2>&1 || missing+=("${PACKAGES[$command]}")
    done
    [[ -x $CNI_BIN/bridge && -x $CNI_BIN/host-local && -x $CNI_BIN/loopback && -x $CNI_BIN/portmap ]] ||
        missing+=(containernetworking-plugins)
    [[ ${#missing[@]} -gt 0 ]] || return 0
    command -v apt-get >/dev/null 2>&1 ||
        die "missing: ${missing[*]} (Debian package names); install them, this is not a Debian-like system"
    log "installing ${missing[*]}"
    # An `update` only when the lists are stale: a fresh machine's usually are not.
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 || {
        apt-get update >&2 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
    } || die "cannot install ${missing[*]} with apt-get (output above)"
    for command in "${!PACKAGES[@]}"; do
        command -v "$command" >/dev/null 2>&1 ||
            die "'$command' is still missing after installing ${PACKAGES[$command]}"
    done
}

check_network() {
    iptables -t nat -S >/dev/null 2>&1 ||
        die "iptables cannot read the nat table ($(iptables -t nat -S 2>&1 | head -n 1)): the kernel needs netfilter NAT (nf_tables or ip_tables, nf_nat, nf_conntrack)"
    [[ -d /proc/sys/net/netfilter ]] ||
        die "no connection tracking in this kernel (/proc/sys/net/netfilter is missing): kube-proxy needs nf_conntrack"
    if ip -o -4 addr show | grep -v " $BRIDGE " | grep -qE ' inet 10\.(244|96)\.0\.'; then
        die "another interface already has an address in $POD_CIDR or $SERVICE_CIDR, which this cluster uses: $(ip -o -4 addr show | grep -E ' inet 10\.(244|96)\.0\.' | awk '{ print $2, $4 }' | tr '\n' ' ')"
    fi
    local port taken=()
    for port in $API_PORT $ETCD_PORT $ETCD_PEER_PORT $CONTROLLER_MANAGER_PORT $SCHEDULER_PORT \
        $KUBELET_PORT $KUBELET_HEALTHZ_PORT $PROXY_HEALTHZ_PORT $PROXY_METRICS_PORT; do
        if ss -Hltn "sport = :$port" | grep -q .; then
            taken+=("$port ($(ss -Hltnp "sport = :$port" | grep -o 'users:(("[^"]*"' | head -n 1 | cut -d'"' -f2))")
        fi
    done
    [[ ${#taken[@]} -eq 0 ]] ||
        die "ports the cluster needs are taken: ${taken[*]}; stop what listens there (or 'scripts/cluster.sh down' if it is a cluster of this script with another state directory)"
}

save_sysctls() {
    local key
    for key in "${SYSCTLS[@]}"; do
        [[ -f /proc/sys/$key ]] && echo "$key $(cat "/proc/sys/$key")"
    done >"$STATE/sysctls"
}

# The sandbox ("pause") container every pod starts with: sleeps until told to stop, and reaps
# the children it inherits. Built static and put alone into an image.
readonly PAUSE_SOURCE='
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signal) { (void)signal; _exit(0); }

static void reap(int signal) {
    (void)signal;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void) {
    struct sigaction on_stop = {.sa_handler = stop};
    struct sigaction on_child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
    sigaction(SIGINT, &on_stop, NULL);
    sigaction(SIGTERM, &on_stop, NULL);
    sigaction(SIGCHLD, &on_child, NULL);
    for (;;)
        pause();
}
'

# The pause image as a docker archive, built once per source and kept in the cache. Prints
# "ARCHIVE NAME".
pause_image() {
    local hash name archive work container
    hash=$(printf '%s' "$PAUSE_SOURCE" | sha256sum | cut -c1-12)
    name=localhost/opgen-pause:$hash
    archive=$CACHE/pause-$hash.tar
    if [[ ! -s $archive ]]; then
        log "building the pause image $name"
        mkdir -p "$CACHE"
        work=$(mktemp -d)
        printf '%s' "$PAUSE_SOURCE" >"$work/pause.c"
        gcc -static -O2 -s -o "$work/pause" "$work/pause.c" >&2 ||
            die "cannot compile the pause program (gcc -static needs libc6-dev)"
        container=$(buildah from scratch)
        buildah copy "$container" "$work/pause" /pause >/dev/null
        buildah config --entrypoint '["/pause"]' --cmd '' "$container" >/dev/null
        buildah commit --quiet "$container" "$name" >/dev/null
        buildah rm "$container" >/dev/null
        buildah push --quiet "$name" "docker-archive:$archive.new:$name" >&2
        buildah rmi "$name" >/dev/null 2>&1 || true
        mv "$archive.new" "$archive"
        rm -rf "$work"
    fi
    echo "$archive $name"
}

ctr_k8s() { ctr --address "$STATE/containerd/containerd.sock" --namespace k8s.io "$@"; }

# `issue NAME SUBJECT USAGE [SAN]`: a key and a certificate signed by the cluster's CA.
issue() {
    local name=$1 subject=$2 usage=$3 san=${4:-} pki=$STATE/pki
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subject" \
        -keyout "$pki/$name.key" -out "$pki/$name.csr" 2>/dev/null
    {
        echo "basicConstraints=CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$usage"
        [[ -z $san ]] || echo "subjectAltName=$san"
    } >"$pki/$name.ext"
    openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
        -days 365 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
    rm -f "$pki/$name.csr" "$pki/$name.ext"
}

make_certificates() {
    local pki=$STATE/pki
    mkdir -p "$pki"
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
        -subj "/CN=opgen-cluster-ca" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
        -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
    issue kube-apiserver "/CN=kube-apiserver" serverAuth \
        "IP:$NODE_IP,IP:$KUBERNETES_SERVICE_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    # The API server's client identity towards the kubelet (logs, exec, port-forward): the
    # kubelet asks the API server whether it may, and system:masters may.
    issue kube-apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
    issue kubelet "/CN=$NODE_NAME" serverAuth "IP:$NODE_IP,DNS:$NODE_NAME"
    issue node "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
    issue admin "/O=system:masters/CN=opgen-cluster-admin" clientAuth
    issue kube-controller-manager "/CN=system:kube-controller-manager" clientAuth
    issue kube-scheduler "/CN=system:kube-scheduler" clientAuth
    issue kube-proxy "/CN=system:kube-proxy" clientAuth
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/service-accounts.key" 2>/dev/null
    openssl pkey -in "$pki/service-accounts.key" -pubout -out "$pki/service-accounts.pub" 2>/dev/null
    chmod 600 "$pki"/*.key
}

# `kubeconfig USER`: a kubeconfig for the client certificate USER, at $STATE/USER.kubeconfig.
kubeconfig() {
    local user=$1
    cat >"$STATE/$user.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: opgen-cluster
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority: $STATE/pki/ca.crt
users:
- name: $user
  user:
    client-certificate: $STATE/pki/$user.crt
    client-key: $STATE/pki/$user.key
contexts:
- name: opgen-cluster
  context:
    cluster: opgen-cluster
    user: $user
current-context: opgen-cluster
EOF
}

# `start NAME COMMAND...`: in its own session (it outlives this script), logging to the state
# directory, its pid recorded there.
start() {
    local name=$1
    shift
    log "starting $name"
    # Without the lock's descriptor, or the cluster would hold the lock as long as it runs.
    setsid "$@" </dev/null >>"$STATE/logs/$name.log" 2>&1 9>&- &
    echo $! >"$STATE/pids/$name.pid"
}

# `wait_ready SECONDS NAME WHAT COMMAND...`: waits for COMMAND while NAME runs; fails with the
# tail of its log.
wait_ready() {
    local seconds=$1 name=$2 what=$3
    shift 3
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ! pid_of "$name" >/dev/null; then
            log_tail "$name"
            die "$name exited before $what (its log ends above)"
        fi
        if ((SECONDS >= deadline)); then
            log_tail "$name"
            die "$name: not $what within $seconds s (its log ends above)"
        fi
        sleep 0.5
    done
    log "$name: $what"
}

setup_network() {
    ip link add "$BRIDGE" type bridge
    ip addr add "$NODE_IP/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    # Pods reach a Service through the node: a Service's address is translated to a pod's in
    # the node's PREROUTING, and the packet is routed back out of the bridge. That needs
    # forwarding on, and these rules keep it to the bridge: no pod traffic leaves by another
    # interface, and none comes in from one.
    iptables -N OPGEN-FORWARD
    iptables -A OPGEN-FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
    iptables -A OPGEN-FORWARD -i "$BRIDGE" -j DROP
    iptables -A OPGEN-FORWARD -o "$BRIDGE" -j DROP
    iptables -I FORWARD 1 -j OPGEN-FORWARD
    echo 1 >/proc/sys/net/ipv4/ip_forward
    mkdir -p "$STATE/cni/net.d" "$STATE/cni/networks"
    # No gateway role for the plugin (it would turn forwarding on by itself and route pods
    # anywhere): the bridge and its address are made above, and the only routes a pod gets are
    # its own subnet and the Services, through the node.
    cat >"$STATE/cni/net.d/10-opgen-cluster.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "opgen-cluster",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/networks",
        "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "10.244.0.10", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "$SERVICE_CIDR", "gw": "$NODE_IP"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
}

start_control_plane() {
    local assets=$1 pki=$STATE/pki
    start etcd "$assets/etcd" --name opgen-cluster --data-dir "$STATE/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "opgen-cluster=http://127.0.0.1:$ETCD_PEER_PORT" \
        --unsafe-no-fsync --log-level warn
    wait_ready 60 etcd "serving" curl -sf "http://127.0.0.1:$ETCD_PORT/health"

    start kube-apiserver "$assets/kube-apiserver" \
        --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
        --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
        --cert-dir "$STATE/kube-apiserver" \
        --tls-cert-file "$pki/kube-apiserver.crt" --tls-private-key-file "$pki/kube-apiserver.key" \
        --client-ca-file "$pki/ca.crt" \
        --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
        --service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$pki/service-accounts.pub" \
        --service-account-signing-key-file "$pki/service-accounts.key" \
        --kubelet-client-certificate "$pki/kube-apiserver-kubelet-client.crt" \
        --kubelet-client-key "$pki/kube-apiserver-kubelet-client.key" \
        --kubelet-certificate-authority "$pki/ca.crt" \
        --kubelet-preferred-address-types InternalIP --profiling=false
    wait_ready 120 kube-apiserver "ready" kubectl_admin get --raw /readyz

    start kube-controller-manager "$assets/kube-controller-manager" \
        --kubeconfig "$STATE/kube-controller-manager.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" \
        --cert-dir "$STATE/kube-controller-manager" --leader-elect=false \
        --use-service-account-credentials \
        --service-account-private-key-file "$pki/service-accounts.key" --root-ca-file "$pki/ca.crt" \
        --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
        --service-cluster-ip-range "$SERVICE_CIDR" --cluster-cidr "$POD_CIDR" \
        --allocate-node-cidrs=false --controllers '*'
    start kube-scheduler "$assets/kube-scheduler" \
        --kubeconfig "$STATE/kube-scheduler.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
        --cert-dir "$STATE/kube-scheduler" --leader-elect=false
}

start_containerd() {
    local dir=$STATE/containerd pause_name=$1
    mkdir -p "$dir"
    # Its own root, state, socket and runc root, and none of the defaults: it never meets the
    # machine's own containerd. The shims' sockets (/run/containerd/s/<hash of our socket>)
    # are the one path containerd 1.6 does not let us choose.
    cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$dir/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_name"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # No container gets an OOM score below containerd's own: lowering one takes CAP_SYS_RESOURCE,
  # which root lacks in some sandboxes and VMs (runc then fails every pod's sandbox with
  # "can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/runc"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$dir/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
EOF
    # Every registry is a closed port on loopback: an image that was not loaded fails to pull
    # at once, and no pull ever leaves the machine.
    mkdir -p "$dir/certs.d/_default"
    printf '%s\n' 'server = "http://127.0.0.1:9"' '[host."http://127.0.0.1:9"]' \
        '  capabilities = ["pull", "resolve"]' >"$dir/certs.d/_default/hosts.toml"
    start containerd containerd --config "$dir/config.toml"
    wait_ready 60 containerd "serving" ctr_k8s version
}

start_node() {
    local assets=$1 pki=$STATE/pki dir
    # The kubelet puts every pod's cgroup under this root, in each controller: `down` finds
    # (and kills) whatever runs there.
    for dir in /sys/fs/cgroup/ /sys/fs/cgroup/*/; do
        [[ -f $dir/cgroup.procs ]] && mkdir -p "$dir/opgen-cluster"
    done
    cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$STATE/containerd/containerd.sock
# Debian 12's containerd and this kind of machine run cgroup v1, which the kubelet refuses
# since 1.35 unless told otherwise.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /opgen-cluster
failSwapOn: false
podLogsDir: $STATE/logs/pods
# A test node on a shared disk: no eviction for a disk that fills up with other work, and no
# garbage collection of the images \`load\` put there.
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
    start kubelet "$assets/kubelet" --config "$STATE/kubelet.yaml" \
        --kubeconfig "$STATE/node.kubeconfig" --root-dir "$STATE/kubelet" \
        --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
    cat >"$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $STATE/kube-proxy.kubeconfig
mode: iptables
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
clusterCIDR: $POD_CIDR
nodePortAddresses: ["$NODE_IP/32"]
# Service traffic leaves the node with the node's bridge address as its source, so a pod that
# calls a Service backed by a pod on the same bridge gets its answer back through the node
# (without br_netfilter, the answer would go to it directly, untranslated).
iptables:
  masqueradeAll: true
# 0: leave the machine's conntrack settings as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
    start kube-proxy "$assets/kube-proxy" --config "$STATE/kube-proxy.yaml"
}

# The binaries: KUBEBUILDER_ASSETS when it holds all of them for this release (as the tests
# set it), else what `scripts/control-plane.sh --node` builds or finds in its cache.
node_assets() {
    local version=$1 dir=${KUBEBUILDER_ASSETS:-} binary
    if [[ -n $dir ]] && "$dir/kube-apiserver" --version 2>/dev/null | grep -qE "v${version//./\\.}(\.|$)"; then
        for binary in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
            [[ -x $dir/$binary ]] || dir=
        done
        if [[ -n $dir ]]; then
            log "using Kubernetes from KUBEBUILDER_ASSETS=$dir"
            echo "$dir"
            return 0
        fi
    fi
    log "getting Kubernetes $version (scripts/control-plane.sh --node)"
    bash "$SCRIPTS/control-plane.sh" --node "$version" ||
        die "scripts/control-plane.sh --node $version failed (output above)"
}

up() {
    local version=${1:-$DEFAULT_VERSION} started=$SECONDS assets pause archive pause_name dir
    check_machine
    if [[ -f $STATE/version ]]; then
        if healthy; then
            [[ $(cat "$STATE/version") == "$version"* ]] ||
                die "a Kubernetes $(cat "$STATE/version") cluster runs; 'scripts/cluster.sh down' it first"
            log "reusing the running cluster (Kubernetes $(cat "$STATE/version"))"
            echo "$STATE/admin.kubeconfig"
            return 0
        fi
    fi
    if [[ -d $STATE ]] || ip link show "$BRIDGE" >/dev/null 2>&1; then
        log "removing what an earlier cluster left (stopped or interrupted)"
        teardown
        ip link delete "$BRIDGE" 2>/dev/null || true
    fi
    install_packages
    check_network

    assets=$(node_assets "$version")
    pause=$(pause_image)
    archive=${pause% *}
    pause_name=${pause#* }

    # From here on, a failure removes everything this run made.
    trap 'rc=$?; if ((rc != 0)); then up_failed; fi' EXIT
    mkdir -p "$STATE"/{pids,logs}
    echo "$assets" >"$STATE/assets"
    "$assets/kube-apiserver" --version | awk '{ print $2 }' | sed 's/^v//' >"$STATE/version"
    save_sysctls
    for dir in "${SHARED_DIRS[@]}"; do
        [[ -e $dir ]] || echo "$dir"
    done >"$STATE/made-dirs"
    make_certificates
    local user
    for user in admin kube-controller-manager kube-scheduler node kube-proxy; do kubeconfig "$user"; done
    setup_network
    start_control_plane "$assets"
    start_containerd "$pause_name"
    ctr_k8s images import "$archive" >/dev/null ||
        die "cannot import the pause image into the node's containerd"
    start_node "$assets"
    wait_ready 120 kubelet "registered its node" kubectl_admin get node "$NODE_NAME"
    wait_ready 120 kubelet "Ready" \
        kubectl_admin wait --for=condition=Ready --timeout=2s node "$NODE_NAME"
    wait_ready 60 kube-proxy "serving" curl -sf "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"
    # Pods are admitted only once their namespace's ServiceAccount exists.
    wait_ready 60 kube-controller-manager "made the default ServiceAccount" \
        kubectl_admin get serviceaccount default --namespace default
    trap - EXIT
    log "Kubernetes $(cat "$STATE/version") node $NODE_NAME is Ready ($((SECONDS - started)) s)"
    echo "$STATE/admin.kubeconfig"
}

# A failed `up` removes what it started, but keeps the logs beside the state directory.
up_failed() {
    log "up failed: removing what it started"
    rm -rf "$STATE-logs"
    cp -r "$STATE/logs" "$STATE-logs" 2>/dev/null || true
    teardown
    log "the components' logs are in $STATE-logs"
}

# The name a pod spec's image resolves to, as the kubelet and containerd resolve it:
# controller:v1 → docker.io/library/controller:v1, team/app → docker.io/team/app:latest.
pod_reference() {
    local name=$1 first
    [[ $name == *@* || ${name##*/} == *:* ]] || name=$name:latest
    first=${name%%/*}
    if [[ $name != */* ]]; then
        echo "docker.io/library/$name"
    elif [[ $first == *.* || $first == *:* || $first == localhost ]]; then
        echo "$name"
    else
        echo "docker.io/$name"
    fi
}

load() {
    local image=$1 reference archive stored
    [[ $(id -u) -eq 0 ]] || die "loading an image needs root (the node's containerd is root's)"
    pid_of containerd >/dev/null || die "no cluster runs: 'scripts/cluster.sh up' first"
    command -v buildah >/dev/null 2>&1 || die "buildah is needed to read the image from containers-storage"
    reference=$(pod_reference "$image")
    # buildah stores an unqualified name under localhost/ (controller:v1 is
    # localhost/controller:v1); the archive carries the name the pod asks for.
    stored=$(buildah inspect --type image --format '{{.FromImage}}' "$image" 2>/dev/null) ||
        die "no image '$image' in buildah's/podman's storage ('buildah images' lists them)"
    archive=$(mktemp -d "${TMPDIR:-/tmp}/opgen-cluster-image.XXXXXX")/image.tar
    buildah push --quiet "$image" "docker-archive:$archive:$reference" >&2 ||
        die "cannot export '$image' from containers-storage"
    ctr_k8s images import "$archive" >/dev/null || die "cannot import '$image' into the node's containerd"
    rm -rf "$(dirname "$archive")"
    local name
    for name in "$stored" "$image"; do
        [[ -n $name && $name != "$reference" ]] || continue
        [[ $name == */* && ${name%%/*} == *[.:]* || ${name%%/*} == localhost ]] || continue
        ctr_k8s images tag --force "$reference" "$name" >/dev/null
    done
    log "loaded $image as $reference"
}

status() {
    if [[ -f $STATE/version ]] && healthy; then
        log "Kubernetes $(cat "$STATE/version") runs; node $NODE_NAME is Ready"
        echo "$STATE/admin.kubeconfig"
    elif [[ -d $STATE ]]; then
        log "a cluster is partly running or stopped: 'scripts/cluster.sh down' removes it"
        return 1
    else
        log "no cluster runs"
        return 1
    fi
}

down() {
    [[ $(id -u) -eq 0 ]] || die "stopping the cluster needs root"
    if [[ ! -d $STATE ]] && ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        log "no cluster is running (no $STATE): nothing to do"
        return 0
    fi
    log "stopping the cluster and removing $STATE"
    teardown
    ip link delete "$BRIDGE" 2>/dev/null || true
    log "stopped"
}

command=${1:-}
[[ $# -gt 0 ]] && shift
case $command in
-h | --help | help)
    usage
    exit 0
    ;;
up | down | status)
    [[ $command == up && $# -le 1 || $# -eq 0 ]] || {
        usage
        exit 2
    }
    ;;
load)
    [[ $# -eq 1 ]] || {
        usage
        exit 2
    }
    ;;
*)
    usage
    exit 2
    ;;
esac

[[ $(id -u) -eq 0 ]] ||
    die "the cluster needs root (containerd, the kubelet, a bridge and iptables rules): run 'sudo scripts/cluster.sh $command'"

# One bring-up or teardown at a time: parallel tests wait for the first to finish and then
# find its cluster. The lock sits beside the state directory, which `down` removes.
mkdir -p "$(dirname "$STATE")"
exec 9>"$STATE.lock"
if ! flock --nonblock 9; then
    log "waiting for another run of this script"
    flock 9
fi
"$command" "$@"
