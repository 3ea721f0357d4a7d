#!/bin/sh
# The tracer boot: lowlat's timerlat/osnoise modes and rtla run interleaved (ROUNDS rounds of
# DURATION seconds each, on CPUS), with /proc/interrupts read around every run (what each tool
# costs the measured CPUs); a baseline with nothing running; hwlat; then tracefs hygiene:
# an interrupted run (SIGINT) and a killed one (SIGKILL), with tracefs dumped before and after.
. /lab/lib.sh
CPUS=$(cat /job/cpus)
D=$(cat /job/duration)
ROUNDS=$(cat /job/rounds)
T=/sys/kernel/tracing

# buffer_size_kb is left out: the top-level ring buffer is allocated on its first use (hwlat's
# here; "7 (expanded: 1408)" before) and the kernel never gives it back.
tracefs_dump() {
    for f in $T/osnoise/* $T/tracing_thresh $T/current_tracer $T/tracing_on $T/tracing_cpumask \
        $T/hwlat_detector/width $T/hwlat_detector/window; do
        printf '%s\t%s\n' "$f" "$(cat "$f" 2>&1 | tr '\n' ' ')"
    done
    printf 'instances\t%s\n' "$(ls $T/instances | tr '\n' ' ')"
}
irqs() { cat /proc/interrupts >"/out/irq-$1.txt"; }
timed() { # timed NAME CMD... : step NAME, /proc/interrupts before and after
    _n=$1
    irqs "$_n-a"
    step "$@"
    irqs "$_n-b"
}

tracefs_dump >/out/tracefs-before.txt
irqs baseline-a
sleep "$D"
irqs baseline-b
i=1
while [ "$i" -le "$ROUNDS" ]; do
    timed "lowlat-timerlat-$i" lowlat measure timer --tracer -a "$CPUS" -D "${D}s" --json "/out/lowlat-timerlat-$i.json" -q
    timed "rtla-timerlat-$i" rtla timerlat top -c "$CPUS" -d "${D}s" -q -n --dma-latency 0
    timed "lowlat-osnoise-$i" lowlat measure noise --tracer -a "$CPUS" -D "${D}s" --noise-threshold 5us --json "/out/lowlat-osnoise-$i.json" --save-trace "/out/lowlat-osnoise-$i.trace" -q
    timed "rtla-osnoise-$i" rtla osnoise top -c "$CPUS" -d "${D}s" -q -T 5
    i=$((i + 1))
done
step hwlat lowlat measure hwlat -D 10s --json /out/hwlat.json -q

# Ctrl-C in the middle of a run: exit 130, a partial result, tracefs as found.
timeout -s INT 4 lowlat measure noise --tracer -a "$CPUS" -D 60s --json /out/interrupted.json -q
echo $? >/out/interrupted.rc
tracefs_dump >/out/tracefs-after-interrupt.txt
# SIGKILL: nothing can be put back by the run itself; the next run does it.
lowlat measure timer --tracer -a "$CPUS" -D 60s -q &
p=$!
sleep 4
kill -9 "$p"
wait "$p" 2>/dev/null
tracefs_dump >/out/tracefs-after-kill.txt
step after-kill lowlat measure timer --tracer -a "$CPUS" -D 2s --json /out/after-kill.json -q
tracefs_dump >/out/tracefs-after.txt
exit 0
