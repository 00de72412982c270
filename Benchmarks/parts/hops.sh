#!/usr/bin/env bash
# Benchmark part `hops`: the thread hops of a durable single-flight command and where its time goes,
# from the scheduler's own events (Benchmarks/probes/thread-hops.py under `perf record`): which thread wakes which,
# how often per command, how long each woken thread waits for a CPU, and the command's phases from the pty to
# its reply (read, step and the SQL; the fdatasync; the way back), whichever threads they run on.
# Environment: BENCH_HOPS_COMMANDS (default 2000). Needs root, `perf` (Debian: linux-perf) and tracefs.
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
command -v perf >/dev/null || { echo "hops: needs perf (apt-get install linux-perf)" >&2; exit 69; }
if [ ! -d /sys/kernel/tracing/events/sched ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || { echo "hops: needs tracefs at /sys/kernel/tracing" >&2; exit 69; }
fi
bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd)
work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-hops.XXXXXX")
trap 'rm -rf "$work"' EXIT
# As the pty part measures the durable store: no rate limit, a synchronised clock.
printf 'log_level: warning\nlimits:\n  commands_per_second: 0\nclock:\n  assume_synchronized: true\n' > "$work/workoutd.yaml"
count=${BENCH_HOPS_COMMANDS:-2000}
(cd Benchmarks/probes && python3 thread-hops.py "$count" \
    "$bin/workoutd serve --config $work/workoutd.yaml --control-socket none --state-dir {state} --device {device}") \
    | tee "$work/table.md"
{
    cat "$work/table.md"
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh hops\`, Benchmarks/probes/thread-hops.py): the release build,"
    echo "durable store, one pty, $count start/end commands with ids in single flight under \`perf record\` of sched_wakeup,"
    echo "sched_switch and fdatasync (tracing slows each step: the phases add up to more than the pty part's p50). A hop waits"
    echo "from the wakeup to the woken thread running; kernel rows are the pty's worker; hops under 0.005 a command left out."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" hops "Thread hops of a durable single-flight command (issue 31)" "$work/section.md"
