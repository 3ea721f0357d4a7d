#!/usr/bin/env bash
# build.sh — install and build everything the local cluster needs, with no container registry:
#   1. Debian packages (etcd, containerd, runc, CNI plugins, openssl, iproute2, curl, jq, ...);
#   2. ONE multi-call Go binary "k8s" (kube-apiserver, kube-controller-manager, kube-scheduler,
#      kubelet, kubectl) built from k8s.io/kubernetes $K8S_VERSION via the Go module proxy;
#   3. a static pause binary (gcc -static) packed as the OCI image localhost/lowlat-pause:1.
# Everything lands in $LOWLAT_K8S_CACHE (default ~/.cache/lowlat-k8s) and is skipped when
# already there: a cold run takes ~7 min on a 2-vCPU machine, a cached one well under 1 s.
#
# Env: K8S_VERSION (v1.34.4), LOWLAT_K8S_CACHE, SKIP_APT=1 (no apt-get),
#      KEEP_GO_CACHES=1 (keep the ~0.6 GiB module cache and ~3 GiB build cache after a build;
#      by default they are deleted once the binary exists, since a cached binary is all a
#      later run needs).
set -euo pipefail
# shellcheck source=ci/k8s/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=image/oci.sh
source "$REPO_ROOT/image/oci.sh"

mkdir -p "$CACHE/bin" "$CACHE/images"
# one build at a time per cache (CI and a developer, or two shells)
exec 9>"$CACHE/.build.lock"
flock -w 1800 9 || die "another build.sh holds $CACHE/.build.lock"

# ------------------------------------------------------------------ 1. Debian packages
APT_PKGS=(etcd-server containerd runc containernetworking-plugins openssl iproute2 curl jq
  util-linux procps gcc libc6-dev)
if [[ ${SKIP_APT:-0} != 1 ]]; then
  need=()
  for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    apt-get update -qq
    # Keep package scripts from starting services (containerd, etcd): up.sh starts its own,
    # with its own configs. Only if no policy-rc.d exists already.
    own_policy=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; own_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    ((own_policy)) && rm -f /usr/sbin/policy-rc.d
  fi
fi
for b in go gcc etcd containerd runc ctr openssl curl jq ip flock; do
  command -v "$b" >/dev/null || die "$b not found (apt package missing, or Go not installed)"
done
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] ||
  die "CNI plugins missing in /usr/lib/cni (apt-get install containernetworking-plugins)"

# ------------------------------------------------------------------ 2. the Go multi-call binary
# The build inputs (go.mod + main.go) are generated here; their hash names the binary, so a
# change to this script or to K8S_VERSION builds anew and never reuses a stale binary.
STAGING="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
  cloud-provider cluster-bootstrap code-generator component-base component-helpers
  controller-manager cri-api cri-client csi-translation-lib dynamic-resource-allocation
  endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy
  kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission
  sample-apiserver sample-cli-plugin sample-controller"
STAGING_VER="v0.${K8S_VERSION#v1.}" # v1.34.4 -> v0.34.4
gomod() {
  echo "module lowlat.invalid/k8s"
  echo
  echo "go 1.24.0"
  echo
  echo "godebug default=go1.24"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "// k8s.io/kubernetes requires its staging modules at v0.0.0 with replace lines that"
  echo "// point into its own tree; outside that tree every one must be pinned here."
  echo "replace ("
  for m in $STAGING; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$STAGING_VER"; done
  echo ")"
}
main_go() {
  cat <<'GO'
// Multi-call binary: dispatch on basename(argv[0]) (symlinks) or on argv[1].
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	_ "time/tzdata"

	"github.com/spf13/cobra"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	name := filepath.Base(os.Args[0])
	switch name {
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl":
	default:
		if len(os.Args) < 2 {
			fmt.Fprintln(os.Stderr, "usage: k8s {kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kubectl} [flags]")
			os.Exit(2)
		}
		name = os.Args[1]
		os.Args = append([]string{name}, os.Args[2:]...)
	}
	var c *cobra.Command
	switch name {
	case "kube-apiserver":
		c = apiserver.NewAPIServerCommand()
	case "kube-controller-manager":
		c = kcm.NewControllerManagerCommand()
	case "kube-scheduler":
		c = scheduler.NewSchedulerCommand()
	case "kubelet":
		c = kubelet.NewKubeletCommand(context.Background())
	case "kubectl":
		logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) // nolint:errcheck
		if err := cli.RunNoErrOutput(kubectlcmd.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown component %q\n", name)
		os.Exit(2)
	}
	os.Exit(cli.Run(c))
}
GO
}
MAJ=1 MIN=$(cut -d. -f2 <<<"$K8S_VERSION")
LDF="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$MAJ -X $p.gitMinor=$MIN"
  LDF+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
INPUT_HASH=$( { gomod; main_go; echo "$LDF providerless $(go env GOVERSION)"; } | sha256sum | cut -c1-12)
TARGET=$BIN/k8s-$K8S_VERSION-$INPUT_HASH
if [[ ! -x $TARGET ]]; then
  SRC=$CACHE/src-$K8S_VERSION-$INPUT_HASH
  mkdir -p "$SRC"
  gomod >"$SRC/go.mod"
  main_go >"$SRC/main.go"
  log "go build Kubernetes $K8S_VERSION -> $TARGET (cold: ~7 min, ~570 MiB of modules)"
  t0=$(date +%s)
  (
    cd "$SRC"
    export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local \
      GOMODCACHE="$CACHE/gomod" GOCACHE="$CACHE/gocache"
    # no "go mod tidy": "go build -mod=mod" resolves only what this main package imports
    go build -trimpath -tags providerless -ldflags "$LDF" -o "$TARGET.tmp" .
  ) || die "go build failed (see above)"
  "$TARGET.tmp" kubectl version --client 2>/dev/null | grep -q "$K8S_VERSION" ||
    die "built binary does not report $K8S_VERSION"
  mv "$TARGET.tmp" "$TARGET"
  log "go build took $(($(date +%s) - t0)) s; $(stat -c%s "$TARGET") bytes, sha256 $(sha256sum "$TARGET" | cut -c1-16)…"
  if [[ ${KEEP_GO_CACHES:-0} != 1 ]]; then
    GOMODCACHE="$CACHE/gomod" GOCACHE="$CACHE/gocache" go clean -cache -modcache
    rm -rf "$CACHE/gocache" "$CACHE/gomod" "$SRC"
    log "deleted the Go caches (KEEP_GO_CACHES=1 keeps them)"
  fi
  # older builds of the binary are never used again
  find "$BIN" -maxdepth 1 -name 'k8s-v*' ! -name "$(basename "$TARGET")" -type f -delete
fi
ln -sfn "$(basename "$TARGET")" "$K8S"
for n in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  ln -sfn k8s "$BIN/$n"
done

# ------------------------------------------------------------------ 3. the pause image
# The sandbox ("pause") container: PID 1 of every pod, reaps zombies, exits on TERM/INT.
# Built here (static, a dozen lines) because no registry can provide registry.k8s.io/pause.
PAUSE_SRC='/* pause: be PID 1 of a pod sandbox, reap zombies, exit on TERM/INT. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void die(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction a = {0}, r = {0};
  a.sa_handler = die; sigaction(SIGTERM, &a, NULL); sigaction(SIGINT, &a, NULL);
  r.sa_handler = reap; r.sa_flags = SA_NOCLDSTOP; sigaction(SIGCHLD, &r, NULL);
  for (;;) pause();
}'
PAUSE_HASH=$(printf '%s' "$PAUSE_SRC" | sha256sum | cut -c1-12)
if [[ ! -f $PAUSE_TAR || $(cat "$PAUSE_TAR.src" 2>/dev/null) != "$PAUSE_HASH" ]]; then
  log "building the static pause image $PAUSE_IMAGE"
  w=$(mktemp -d)
  printf '%s\n' "$PAUSE_SRC" >"$w/pause.c"
  gcc -O2 -static -o "$w/pause" "$w/pause.c"
  strip "$w/pause"
  mkdir -p "$w/root"
  install -m 0755 "$w/pause" "$w/root/pause"
  oci_archive "$w/root" "$PAUSE_TAR" "$PAUSE_IMAGE" 0 '{"Entrypoint":["/pause"],"WorkingDir":"/"}'
  echo "$PAUSE_HASH" >"$PAUSE_TAR.src"
  rm -rf "$w"
fi
log "ready: $(readlink "$K8S") ($(stat -c%s "$TARGET") bytes), $(basename "$PAUSE_TAR") ($(stat -c%s "$PAUSE_TAR") bytes) in $CACHE"
