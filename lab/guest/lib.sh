# Helpers for the lab's job scripts (sourced by /job/run.sh in the guest; busybox sh).

# step NAME CMD... — run CMD, keep its stdout in NAME.out and stderr in NAME.err, append
# "NAME RC SECONDS" to steps.txt. Never stops the job: the host judges each step.
# Each step is also announced on the console (ttyS0), so a boot that hangs shows where.
step() {
    _name=$1
    shift
    _t0=$(date +%s)
    echo "LOWLAT-LAB-STEP $_name: $*" >/dev/console
    "$@" >"/out/$_name.out" 2>"/out/$_name.err"
    _rc=$?
    echo "$_name $_rc $(($(date +%s) - _t0))" >>/out/steps.txt
    echo "LOWLAT-LAB-STEP $_name: rc $_rc" >/dev/console
    echo "step $_name: rc $_rc"
    return 0
}

# dump_state FILE — every value the runtime tier may write, one "path<TAB>value" line each,
# plus every thread's allowed CPUs ("task PID COMM<TAB>cpus"): compared before apply and after
# revert, byte for byte.
dump_state() {
    {
        for f in /proc/irq/default_smp_affinity /proc/irq/*/smp_affinity /proc/irq/*/smp_affinity_list \
            /sys/devices/virtual/workqueue/cpumask /sys/devices/virtual/workqueue/*/cpumask \
            /sys/bus/workqueue/devices/writeback/cpumask /sys/bus/workqueue/devices/writeback/numa \
            /sys/bus/workqueue/devices/writeback/affinity_scope \
            /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
            /sys/kernel/mm/ksm/run \
            /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor \
            /sys/devices/system/cpu/cpu*/power/energy_perf_bias \
            /sys/devices/system/cpu/cpu*/power/pm_qos_resume_latency_us \
            /sys/devices/system/cpu/cpu*/cpuidle/state*/disable; do
            [ -r "$f" ] && printf '%s\t%s\n' "$f" "$(cat "$f" 2>/dev/null)"
        done
        for f in $(find /proc/sys/kernel /proc/sys/vm /proc/sys/net/core -type f 2>/dev/null | sort); do
            case $f in
            */random/* | */ns_last_pid | */stat_refresh | */drop_caches | */compact_memory | */sysrq*) continue ;;
            esac
            [ -r "$f" ] && printf '%s\t%s\n' "$f" "$(cat "$f" 2>/dev/null | tr '\n\t' '  ')"
        done
        for d in /proc/[0-9]*; do
            p=${d#/proc/}
            c=$(cat "$d/comm" 2>/dev/null) || continue
            a=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$d/status" 2>/dev/null)
            printf 'task %s %s\t%s\n' "$p" "$c" "$a"
        done
    } >"$1"
}
