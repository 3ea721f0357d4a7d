#!/usr/bin/env bash
# up.sh — start a real Kubernetes cluster on this machine, loopback only:
#   etcd -> one containerd per node -> images imported -> kube-apiserver ->
#   kube-controller-manager + kube-scheduler -> one kubelet per node -> every node Ready.
#
# NODES=2 (default) | 1 | 3: several kubelets on one machine give distinct Node objects (the
# first is named after this host, then "localhost", then other 127.x names of /etc/hosts),
# each with its own containerd, ports, cgroup root and pod bridge.
# Idempotent: a component whose PID file names a live process is left alone, so a re-run on
# a live cluster only checks it (about a second), and restarts whatever died.
# Afterwards: source ci/k8s/env.sh (KUBECONFIG, PATH with kubectl, image name, ...).
#
# Env: NODES, UP_TIMEOUT (seconds per wait, default 120), KLOG_V (2),
#      KEEP_KUBELET_SYSCTLS=1 (leave the kubelet's kernel.panic* / vm.overcommit_memory),
#      LOWLAT_IMAGE_ARCHIVE (default target/lowlat-image.oci.tar: imported when it exists),
#      STATIC_CPU_NODE (default 1: the node whose kubelet runs the static CPU manager; 0: none),
#      RESERVED_CPUS (default 0: that kubelet's reservedSystemCPUs).
set -euo pipefail
# shellcheck source=ci/k8s/lib.sh
source "$(dirname "$0")/lib.sh"

NODES=${NODES:-2}
STATIC_CPU_NODE=${STATIC_CPU_NODE:-1}
RESERVED_CPUS=${RESERVED_CPUS:-0}
UP_TIMEOUT=${UP_TIMEOUT:-120}
KLOG_V=${KLOG_V:-2}
T0=$(date +%s.%N)
el() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
log() { printf '[up %s +%ss] %s\n' "$(date +%T)" "$(el)" "$*"; }

# ports NAME: the TCP ports NAME listens on (all on 127.0.0.1)
ports() {
  case $1 in
    etcd) echo 2379 2380 ;;
    kube-apiserver) echo 6443 ;;
    kube-controller-manager) echo 10257 ;;
    kube-scheduler) echo 10259 ;;
    kubelet*) echo "$KPORT $HPORT" ;;
  esac
}
# start NAME CMD... : detached in its own session, log to $LOGS/NAME.log, PID to $PIDS/NAME
start() {
  local name=$1 p busy; shift
  if alive "$name"; then return 0; fi
  for p in $(ports "$name"); do # someone else's listener (another cluster?) would only confuse
    busy=$(ss -Hltnp "sport = :$p" 2>/dev/null)
    [[ -z $busy ]] || die "port $p, needed by $name, is taken: $busy"
  done
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$name"
  log "started $name (pid $!)"
}
# fail NAME WHY: say what did not come up, with the last lines of its log
fail() {
  echo "[up] ERROR: $2 — last lines of $LOGS/$1.log:" >&2
  tail -n 25 "$LOGS/$1.log" 2>/dev/null | sed 's/^/    /' >&2
  echo "[up] logs: $LOGS; clean up with ci/k8s/down.sh" >&2
  exit 1
}
# wait_for NAME TIMEOUT WHAT CMD... : poll CMD until it succeeds; stop early if NAME died
wait_for() {
  local name=$1 to=$2 what=$3; shift 3
  local end=$(($(date +%s) + to))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || fail "$name" "$name exited while waiting for: $what"
    (($(date +%s) < end)) || fail "$name" "timed out after ${to}s waiting for: $what"
    sleep 0.5
  done
}
remember() { grep -qxF "$2" "$STATE/$1" 2>/dev/null || echo "$2" >>"$STATE/$1"; }

[[ $(id -u) == 0 ]] || die "must run as root (containerd, kubelet, cgroups, bridges)"
[[ -x $K8S ]] || die "$K8S missing: run ci/k8s/build.sh first"
[[ -f $PAUSE_TAR ]] || die "$PAUSE_TAR missing: run ci/k8s/build.sh first"
for b in etcd containerd runc ctr openssl curl ip jq; do
  command -v "$b" >/dev/null || die "$b missing: run ci/k8s/build.sh"
done
mapfile -t NODE_NAMES < <(node_names "$NODES") || die "cannot name $NODES nodes"
((${#NODE_NAMES[@]} == NODES)) || die "cannot name $NODES nodes"
mkdir -p "$STATE" "$LOGS" "$PIDS" "$PKI" "$RUNDIR" "$ETCD_DIR"
chmod 700 "$STATE" "$ETCD_DIR"
if [[ -f $STATE/nodes ]] && [[ $(wc -l <"$STATE/nodes") != "$NODES" ]]; then
  die "a cluster with $(wc -l <"$STATE/nodes") node(s) is up (state in $STATE); run ci/k8s/down.sh before NODES=$NODES"
fi
printf '%s\n' "${NODE_NAMES[@]}" >"$STATE/nodes"

# ------------------------------------------------------------------ PKI + tokens (once)
sign() { # sign NAME SUBJECT EXTENSIONS: key + cert signed by our CA
  openssl req -newkey rsa:2048 -nodes -keyout "$PKI/$1.key" -out "$PKI/$1.csr" -subj "$2" 2>/dev/null
  printf '%b\n' "$3" >"$PKI/$1.ext"
  openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$PKI/$1.ext" -out "$PKI/$1.crt" 2>/dev/null
  rm -f "$PKI/$1.csr" "$PKI/$1.ext"; chmod 600 "$PKI/$1.key"
}
if [[ ! -f $PKI/done ]]; then
  log "generating PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 3650 \
    -subj "/CN=lowlat-k8s-ca" 2>/dev/null
  sign apiserver /CN=kube-apiserver "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth"
  # the apiserver's client cert towards the kubelets (logs, exec, attach)
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  rnd() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
  { echo "$(rnd),admin,uid-admin,\"system:masters\""   # token,user,uid,"groups"
    echo "$(rnd),system:kube-controller-manager,uid-kcm"
    echo "$(rnd),system:kube-scheduler,uid-sched"; } >"$PKI/tokens.csv"
  awk -F, '$2=="admin" {print $1}' "$PKI/tokens.csv" >"$PKI/admin.token"
  chmod 600 "$PKI"/*.key "$PKI/tokens.csv" "$PKI/admin.token"
  touch "$PKI/done"
fi
kubeconfig() { # kubeconfig FILE USER [token|cert]
  local auth
  if [[ ${3:-token} == cert ]]; then
    auth="client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key"
  else
    auth="token: $(awk -F, -v u="$2" '$2==u {print $1}' "$PKI/tokens.csv")"
  fi
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: lowlat-k8s
  cluster:
    server: $API_URL
    certificate-authority: $PKI/ca.crt
users:
- name: "$2"
  user:
    $auth
contexts:
- name: lowlat-k8s
  context: {cluster: lowlat-k8s, user: "$2", namespace: default}
current-context: lowlat-k8s
KC
  chmod 600 "$1"
}
kubeconfig "$KUBECONFIG_ADMIN" admin
kubeconfig "$STATE/kcm.kubeconfig" system:kube-controller-manager
kubeconfig "$STATE/scheduler.kubeconfig" system:kube-scheduler

# ------------------------------------------------------------------ etcd (loopback, tmpfs)
start etcd etcd --name lowlat-k8s --data-dir "$ETCD_DIR/data" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster lowlat-k8s=http://127.0.0.1:2380 \
  --quota-backend-bytes 2147483648 --logger zap --log-outputs stderr

# ------------------------------------------------------------------ containerd, one per node
# Remember what existed before us, so that down.sh removes only what we made: netns files,
# /run/containerd (containerd 1.6 shims always put their sockets in /run/containerd/s),
# /run/netns, bridges, cgroup roots.
[[ -f $STATE/netns.before ]] || { ls /run/netns 2>/dev/null || true; } >"$STATE/netns.before"
[[ -e /run/containerd || -f $STATE/run-containerd.ours ]] || touch "$STATE/run-containerd.ours"
[[ -e /run/netns || -f $STATE/run-netns.ours ]] || touch "$STATE/run-netns.ours"
for ((i = 1; i <= NODES; i++)); do
  node_vars "$i"
  mkdir -p "$ND/cni/net.d" "$NR"
  cat >"$ND/containerd.toml" <<TOML
version = 2
root = "$ND/containerd"
state = "$NR/containerd"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = ""
[debug]
  address = ""
  level = "info"
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    disable_apparmor = true
    tolerate_missing_hugetlb_controller = true
    # This VM's capability bounding set lacks CAP_SYS_RESOURCE, so nobody may write a negative
    # oom_score_adj; the kubelet asks -998 for every sandbox and runc dies with "can't get
    # final child's PID from pipe: EOF". Clamp the score to containerd's own (0).
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "/usr/sbin/runc"
          SystemdCgroup = false
          Root = "$NR/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$ND/cni/net.d"
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = "$ND/containerd-opt"
TOML
  # CNI: a bridge with no address on the host side, no gateway, no masquerade, no routes:
  # a pod's eth0 reaches only pods of the same node, never the host's network or beyond.
  cat >"$ND/cni/net.d/10-lowlat.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "lowlat$SUF",
  "plugins": [
    { "type": "bridge", "bridge": "$BR", "isGateway": false, "ipMasq": false,
      "hairpinMode": false,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$SUBNET" }]],
                "dataDir": "$STATE/cni/ipam" } },
    { "type": "loopback" }
  ]
}
CNI
  # create the bridge first with IPv6 off, so that its host side never gets any address
  if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge
    sysctl -qw "net.ipv6.conf.$BR.disable_ipv6=1"
    ip link set "$BR" up
    remember bridges.ours "$BR"
  fi
  start "containerd$SUF" containerd --config "$ND/containerd.toml"
done
wait_for etcd 30 "etcd health on 127.0.0.1:2379" curl -sf http://127.0.0.1:2379/health
# images: pause (the sandbox) and, when built, lowlat's own image
IMAGE_ARCHIVE=${LOWLAT_IMAGE_ARCHIVE:-$REPO_ROOT/target/lowlat-image.oci.tar}
for ((i = 1; i <= NODES; i++)); do
  node_vars "$i"
  wait_for "containerd$SUF" 30 "containerd$SUF on $SOCK" ctr --address "$SOCK" version
  if ! ctr --address "$SOCK" -n k8s.io images ls -q | grep -qxF "$PAUSE_IMAGE"; then
    ctr --address "$SOCK" -n k8s.io images import "$PAUSE_TAR" >/dev/null
    log "containerd$SUF: imported $PAUSE_IMAGE"
  fi
done
if [[ -f $IMAGE_ARCHIVE ]]; then
  "$K8S_LIB_DIR/load-image.sh" "$IMAGE_ARCHIVE" | sed 's/^/  /'
fi

# ------------------------------------------------------------------ kube-apiserver
start kube-apiserver "$K8S" kube-apiserver \
  --bind-address=127.0.0.1 --secure-port=6443 \
  --etcd-servers=http://127.0.0.1:2379 \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/ca.crt" --token-auth-file="$PKI/tokens.csv" \
  --requestheader-client-ca-file="$PKI/ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-cluster-ip-range=10.96.0.0/24 --endpoint-reconciler-type=none \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --allow-privileged=true \
  --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP,Hostname \
  --profiling=false --v="$KLOG_V"
api() { curl -sf --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(cat "$PKI/admin.token")" "$API_URL$1"; }
wait_for kube-apiserver "$UP_TIMEOUT" "kube-apiserver /readyz on $API_URL" api /readyz
log "kube-apiserver ready"

# ------------------------------------------------------------------ controller-manager, scheduler
start kube-controller-manager "$K8S" kube-controller-manager \
  --kubeconfig="$STATE/kcm.kubeconfig" \
  --authentication-kubeconfig="$STATE/kcm.kubeconfig" --authorization-kubeconfig="$STATE/kcm.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
  --use-service-account-credentials=true \
  --controllers='*,-nodeipam,-service-lb-controller,-route,-cloud-node-lifecycle' \
  --profiling=false --v="$KLOG_V"
start kube-scheduler "$K8S" kube-scheduler \
  --kubeconfig="$STATE/scheduler.kubeconfig" \
  --authentication-kubeconfig="$STATE/scheduler.kubeconfig" --authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false --v="$KLOG_V"

# ------------------------------------------------------------------ kubelets
# The kubelet (protectKernelDefaults: false) rewrites these sysctls once at start-up, e.g.
# kernel.panic_on_oops 0 -> 1 (an oops would then panic the VM). Save the host's values
# before the first kubelet ever starts; restore_sysctls puts them back once every node is
# Ready (the kubelet does not check again) and down.sh does it again.
if [[ ! -f $STATE/sysctl.before ]]; then
  for k in $KUBELET_SYSCTLS; do echo "$k $(cat "/proc/sys/$k")"; done >"$STATE/sysctl.before"
fi
# The kubelets' API listeners: one address per node, 192.0.2.I (RFC 5737 TEST-NET-1, never
# routed), on a port-less bridge: local delivery only. The API server's node proxy
# (GET /api/v1/nodes/NAME/proxy/configz, what `lowlat cluster nodes` reads) refuses loopback
# node addresses ("address not allowed"), so the nodes' InternalIP must not be 127.x.
if ! ip link show "$NODE_IF" >/dev/null 2>&1; then
  ip link add "$NODE_IF" type bridge
  sysctl -qw "net.ipv6.conf.$NODE_IF.disable_ipv6=1"
  ip link set "$NODE_IF" up
  remember bridges.ours "$NODE_IF"
fi
# the cgroup v1 hierarchies a kubelet's cgroupRoot must exist in (cgroupfs driver), name=systemd included
V1_CTRL=$(awk '$3 == "cgroup" && $2 ~ "^/sys/fs/cgroup/" {print $2}' /proc/self/mounts)
for ((i = 1; i <= NODES; i++)); do
  node_vars "$i"
  NAME=${NODE_NAMES[$((i - 1))]}
  ip -4 addr show dev "$NODE_IF" | grep -qF " $NODE_IP/" || ip addr add "$NODE_IP/32" dev "$NODE_IF"
  [[ -f $PKI/kubelet-$NAME.crt ]] || {
    sign "kubelet-$NAME" "/CN=$NAME" "subjectAltName=IP:127.0.0.1,IP:$NODE_IP,DNS:localhost,DNS:$NAME\nextendedKeyUsage=serverAuth"
    sign "system:node:$NAME" "/O=system:nodes/CN=system:node:$NAME" "extendedKeyUsage=clientAuth"
  }
  kubeconfig "$ND/kubelet.kubeconfig" "system:node:$NAME" cert
  if [[ -n $CGROOT ]]; then # extra nodes get their own cgroup root: /lowlat-nI/kubepods
    for c in $V1_CTRL; do
      [[ -d $c$CGROOT ]] || { mkdir "$c$CGROOT" && remember cgroups.ours "$c$CGROOT"; }
    done
    [[ -s /sys/fs/cgroup/cpuset$CGROOT/cpuset.cpus ]] || {
      cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset$CGROOT/cpuset.cpus"
      cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset$CGROOT/cpuset.mems"
    }
  fi
  mkdir -p "$ND/kubelet" "$ND/pod-logs"
  # CPU manager: static on ONE node only. All kubelets share this machine's CPUs, and two static
  # managers would each hand the same CPU out as exclusive. Node STATIC_CPU_NODE gets
  # reservedSystemCPUs=RESERVED_CPUS (CPU 0 on 2 vCPUs: CPU 1 is its only exclusive CPU, and
  # its allocatable CPU drops to 1); the others keep policy none.
  if ((i == STATIC_CPU_NODE)); then
    CPU_MANAGER="cpuManagerPolicy: static
reservedSystemCPUs: \"$RESERVED_CPUS\""
    CPU_POLICY=static CPU_SETTINGS="static $RESERVED_CPUS"
  else
    CPU_MANAGER="cpuManagerPolicy: none"
    CPU_POLICY=none CPU_SETTINGS=none
  fi
  # A kubelet refuses to start when its checkpoint (cpu_manager_state in its root dir) was
  # written under another policy or reserved set ("could not restore state from checkpoint").
  # Stale only if the settings changed (a kubelet restarted on a live cluster keeps its pods'
  # exclusive CPUs on record); down.sh removes the checkpoints.
  CPU_STATE=$ND/kubelet/cpu_manager_state
  if ! alive "kubelet$SUF"; then
    if [[ -f $CPU_STATE ]] && { [[ $(jq -r .policyName "$CPU_STATE" 2>/dev/null) != "$CPU_POLICY" ]] ||
      [[ $(cat "$ND/kubelet/cpu_manager.settings" 2>/dev/null) != "$CPU_SETTINGS" ]]; }; then
      rm -f "$CPU_STATE"
      log "kubelet$SUF: removed $CPU_STATE (written under other CPU manager settings)"
    fi
    echo "$CPU_SETTINGS" >"$ND/kubelet/cpu_manager.settings"
  fi
  cat >"$ND/kubelet-config.yaml" <<KCFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KPORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $HPORT
tlsCertFile: $PKI/kubelet-$NAME.crt
tlsPrivateKeyFile: $PKI/kubelet-$NAME.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
${CGROOT:+cgroupRoot: $CGROOT}
failSwapOn: false
$CPU_MANAGER
# each kubelet its own pod log directory: with the default /var/log/pods shared, a kubelet
# deletes the other node's pod logs as orphans, and a finished pod's results (in its log) vanish
podLogsDir: $ND/pod-logs
failCgroupV1: false
# no registry: images are imported, and a garbage-collected image could never come back
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
evictionPressureTransitionPeriod: 10s
syncFrequency: 10s
nodeStatusReportFrequency: 1m
serializeImagePulls: false
resolvConf: /etc/resolv.conf
# no CAP_SYS_RESOURCE on this VM kind: a negative score cannot be written
oomScoreAdj: 0
KCFG
  start "kubelet$SUF" "$K8S" kubelet \
    --config="$ND/kubelet-config.yaml" --kubeconfig="$ND/kubelet.kubeconfig" \
    --root-dir="$ND/kubelet" --cert-dir="$ND/kubelet/pki" \
    --hostname-override="$NAME" --node-ip="$NODE_IP" --v="$KLOG_V"
done
# Ready = the kubelet's healthz answers AND the Node says Ready (after a kubelet restart the
# Node keeps saying Ready for up to 40 s, so the Node alone is not enough)
node_ready() { # node_ready NAME HEALTHZ_PORT
  curl -sf "http://127.0.0.1:$2/healthz" >/dev/null &&
    [[ $(KUBECONFIG=$KUBECONFIG_ADMIN "$K8S" kubectl get node "$1" \
      -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}
for ((i = 1; i <= NODES; i++)); do
  node_vars "$i"
  NAME=${NODE_NAMES[$((i - 1))]}
  wait_for "kubelet$SUF" "$UP_TIMEOUT" "node $NAME Ready (kubelet$SUF healthz 127.0.0.1:$HPORT)" node_ready "$NAME" "$HPORT"
  log "node $NAME Ready (kubelet$SUF on $NODE_IP:$KPORT)"
done
# every kubelet has written its sysctls by now (before its node could turn Ready)
[[ ${KEEP_KUBELET_SYSCTLS:-0} == 1 ]] || restore_sysctls
# pods are rejected until the default ServiceAccount exists
wait_for kube-controller-manager 60 "ServiceAccount default/default" api /api/v1/namespaces/default/serviceaccounts/default
log "cluster up: ${NODE_NAMES[*]} ($NODES node(s)) — source ci/k8s/env.sh"
