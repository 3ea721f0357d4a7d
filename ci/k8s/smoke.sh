#!/usr/bin/env bash
# shellcheck disable=SC2015 # "check && ok ... || bad ...": ok and bad always succeed
# smoke.sh — prove that lowlat's image runs on every node of the local cluster and that its
# output comes back through the API, the way `lowlat cluster` will work:
#   for each kubelet-backed node, one batch/v1 Job pinned to it (nodeSelector
#   kubernetes.io/hostname, through the scheduler), all created at once: image $LOWLAT_IMAGE
#   with imagePullPolicy: Never, privileged, hostPID, hostNetwork, dnsPolicy: None (no DNS
#   query can leave the machine), no service-account token, running `lowlat inspect --json`;
#   then each pod's log read through the API (GET .../pods/NAME/log) and checked: valid JSON,
#   this host's kernel release and command line, host PID 1 visible (hostPID), IRQs readable.
# Imports the image first when a node lacks it (ci/k8s/load-image.sh).
# Prints one PASS/FAIL line per check and ends with "N passed, N failed"; exit 0 only if all pass.
# Env: SMOKE_TIMEOUT (seconds for all Jobs to complete, default 120), KEEP_JOBS=1.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
eval "$(bash "$HERE/env.sh")"
# shellcheck source=ci/k8s/lib.sh
source "$HERE/lib.sh"
TIMEOUT=${SMOKE_TIMEOUT:-120}
pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [[ $fail -eq 0 ]]; exit; }
k() { kubectl "$@"; }

k get --raw /readyz >/dev/null 2>&1 || { bad "apiserver not ready at $LOWLAT_K8S_API (run ci/k8s/up.sh)"; finish; }
read -r -a nodes <<<"$LOWLAT_K8S_NODES"
((${#nodes[@]})) || { bad "no nodes recorded in $LOWLAT_K8S_STATE/nodes"; finish; }
"$HERE/load-image.sh" >/dev/null || { bad "could not import $LOWLAT_IMAGE_ARCHIVE (build it: image/build.sh)"; finish; }
ok "image $LOWLAT_IMAGE present on ${#nodes[@]} node(s)"

job() { # job NAME NODE
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, labels: {app: lowlat-smoke}}
spec:
  backoffLimit: 0
  ttlSecondsAfterFinished: 600
  template:
    metadata: {labels: {app: lowlat-smoke, job: $1}}
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: $2}
      tolerations: [{operator: Exists}]
      hostPID: true
      hostNetwork: true
      dnsPolicy: None
      dnsConfig: {nameservers: [127.0.0.1]}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 5
      containers:
      - name: lowlat
        image: $LOWLAT_IMAGE
        imagePullPolicy: Never
        command: [lowlat, inspect, --json]
        securityContext: {privileged: true}
YAML
}

k delete jobs -l app=lowlat-smoke --wait=true --timeout=60s >/dev/null 2>&1
t0=$(date +%s.%N)
for n in "${nodes[@]}"; do job "lowlat-smoke-$n" "$n"; echo ---; done | k apply -f - >/dev/null ||
  { bad "could not create the Jobs"; finish; }
jobs=(); for n in "${nodes[@]}"; do jobs+=("job/lowlat-smoke-$n"); done
if k wait --for=condition=complete "${jobs[@]}" --timeout="${TIMEOUT}s" >/dev/null 2>&1; then
  ok "${#nodes[@]} Job(s) complete, one per node, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s from create"
else
  bad "Jobs not complete within ${TIMEOUT}s:"
  k get jobs,pods -l app=lowlat-smoke -o wide 2>&1 | sed 's/^/    /'
  k get events --sort-by=.lastTimestamp 2>&1 | tail -15 | sed 's/^/    /'
fi

kernel=$(uname -r) cmdline=$(tr -d '\n' </proc/cmdline) pid1=$(cat /proc/1/comm)
for n in "${nodes[@]}"; do
  name=lowlat-smoke-$n
  pod=$(k get pods -l job="$name" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
  [[ -n $pod ]] || { bad "$n: no pod for $name"; continue; }
  ran_on=$(k get pod "$pod" -o jsonpath='{.spec.nodeName}')
  [[ $ran_on == "$n" ]] && ok "$n: pod $pod ran on $ran_on" || bad "$n: pod $pod ran on '$ran_on'"
  out=$(k get --raw "/api/v1/namespaces/default/pods/$pod/log" 2>&1)
  if ! jq -e 'type == "object" and has("schema_version")' >/dev/null 2>&1 <<<"$out"; then
    bad "$n: log via the API is not inspect JSON: ${out:0:300}"
    continue
  fi
  ok "$n: inspect JSON ($(wc -c <<<"$out") bytes) read through the API (pods/$pod/log)"
  got=$(jq -r '.kernel.release' <<<"$out")
  [[ $got == "$kernel" ]] && ok "$n: kernel.release $got = this host's" || bad "$n: kernel.release '$got' != '$kernel'"
  got=$(jq -r '.kernel.cmdline' <<<"$out")
  [[ $got == "$cmdline" ]] && ok "$n: kernel.cmdline = this host's /proc/cmdline" || bad "$n: kernel.cmdline '$got'"
  got=$(jq -r '[.tasks[] | select(.pid == 1)][0].comm // empty' <<<"$out")
  [[ $got == "$pid1" ]] && ok "$n: hostPID: pid 1 is the host's '$got' ($(jq '.tasks | length' <<<"$out") tasks seen)" ||
    bad "$n: hostPID: pid 1 is '$got', expected '$pid1'"
  got=$(jq '.irqs | length' <<<"$out")
  ((got > 0)) && ok "$n: privileged: $got IRQs read from /proc/interrupts" || bad "$n: no IRQs (is /proc/interrupts masked?)"
done
[[ ${KEEP_JOBS:-0} == 1 ]] || k delete jobs -l app=lowlat-smoke --cascade=foreground --wait=false >/dev/null 2>&1
finish
