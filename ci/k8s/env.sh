#!/usr/bin/env bash
# env.sh — the local cluster's coordinates, for tests and shells.
#
#   source ci/k8s/env.sh      export them into this shell (defines no functions)
#   ci/k8s/env.sh             print them as `export NAME=value` lines
#   ci/k8s/env.sh --json      print them as one JSON object (for Rust tests: serde_json)
#
#   KUBECONFIG                 admin kubeconfig (token auth, system:masters)
#   PATH                       prefixed with the dir holding kubectl (and the other components)
#   LOWLAT_IMAGE               the image name pods must use, with imagePullPolicy: Never
#   LOWLAT_IMAGE_ARCHIVE       the archive image/build.sh writes (ci/k8s/load-image.sh imports it)
#   LOWLAT_K8S_NODES           the kubelet-backed node names, space separated (no fake nodes)
#   LOWLAT_K8S_API             https://127.0.0.1:6443
#   LOWLAT_K8S_CA              the cluster CA (PEM)
#   LOWLAT_K8S_TOKEN_FILE      the admin bearer token, for raw API calls
#   LOWLAT_K8S_FAKE_NODE_LABEL label of the kubelet-less nodes made by fake-nodes.sh
#   LOWLAT_K8S_STATE / _CACHE / _RUN / _LOGS   where the harness keeps its things
# The values are printed whether or not the cluster is up; `kubectl get --raw /readyz`
# tells whether it is.
if [[ ${BASH_SOURCE[0]} != "$0" ]]; then # sourced: evaluate our own output, leak nothing else
  eval "$(bash "${BASH_SOURCE[0]}")"
  return 0
fi
set -euo pipefail
# shellcheck source=ci/k8s/lib.sh
source "$(dirname "$0")/lib.sh"

nodes=$( { tr '\n' ' ' 2>/dev/null <"$STATE/nodes" || true; } | sed 's/ $//')
path=$BIN:$PATH
[[ :$PATH: == *":$BIN:"* ]] && path=$PATH # sourcing twice does not grow PATH
vars=(
  KUBECONFIG "$KUBECONFIG_ADMIN"
  PATH "$path"
  LOWLAT_IMAGE "$("$REPO_ROOT/image/build.sh" --print-name)"
  LOWLAT_IMAGE_ARCHIVE "${LOWLAT_IMAGE_ARCHIVE:-$REPO_ROOT/target/lowlat-image.oci.tar}"
  LOWLAT_K8S_NODES "$nodes"
  LOWLAT_K8S_API "$API_URL"
  LOWLAT_K8S_CA "$PKI/ca.crt"
  LOWLAT_K8S_TOKEN_FILE "$PKI/admin.token"
  LOWLAT_K8S_FAKE_NODE_LABEL "$FAKE_NODE_LABEL"
  LOWLAT_K8S_STATE "$STATE"
  LOWLAT_K8S_CACHE "$CACHE"
  LOWLAT_K8S_RUN "$RUNDIR"
  LOWLAT_K8S_LOGS "$LOGS"
)
if [[ ${1:-} == --json ]]; then
  jq -n '$ARGS.positional | [range(0; length; 2) as $i | {(.[$i]): .[$i + 1]}] | add' --args "${vars[@]}"
else
  for ((i = 0; i < ${#vars[@]}; i += 2)); do printf 'export %s=%q\n' "${vars[i]}" "${vars[i + 1]}"; done
fi
