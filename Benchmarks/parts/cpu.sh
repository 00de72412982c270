#!/usr/bin/env bash
# Benchmark part `cpu`: what one single-flight command through a real pty costs the program serving it: mallocs,
# CPU (user and system, every thread, from /proc/PID/stat) and instructions where perf stat can count them, for
# workoutd with its durable and its in-memory store beside the C echo, the C echo behind epoll, the echo over NIO
# (workoutd's transport), workoutd's session behind an epoll loop without NIO (over each store), the C durable echo
# and the Python durable peer, round by round in one run (WorkoutdBenchmarks --count); then a perf record -g profile
# of each workoutd store, by function and by phase (Benchmarks/probes/cpu_profile.py).
# Run through `bash Benchmarks/bench.sh cpu`; needs a C compiler (cc) and, for the profile, perf.
#
# Environment: BENCH_ROUNDS (starts of each program, default 3), BENCH_ROUND_TRIPS (measured per start, 20000),
# BENCH_WARM_UP (2000).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd WorkoutdBenchmarks NIOEchoBaseline SessionBehindEpoll)

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The programs measured: "${programs[@]}" (Benchmarks/pty-programs.sh).
# shellcheck source=Benchmarks/pty-programs.sh
source "$root/Benchmarks/pty-programs.sh"
cc -O2 -Wall -shared -fPIC -o "$work/malloc-count.so" Benchmarks/peers/malloc-count.c

count=(--count on --malloc-shim "$work/malloc-count.so")
# The C echo waiting as an event loop waits: what readiness costs the kernel, apart from what NIO's loop costs.
cc -O2 -Wall -o "$work/epoll-echo" Benchmarks/peers/epoll-echo.c
count+=(--epoll-echo "echo behind epoll (C)=$work/epoll-echo {device}")
# workoutd's session over the in-memory store behind an epoll loop of its own: the protocol without NIO's loop.
count+=(--session-epoll "session behind epoll (no NIO)=$bin/SessionBehindEpoll {device}")
# The same over workoutd's durable store, committing in place: the durable protocol without NIO's loop.
count+=(--session-epoll-durable "session behind epoll, durable store (no NIO)=$bin/SessionBehindEpoll {device} $work/session-epoll-{run}")
# Instructions where perf can count them: a container or a VM often has no hardware counters.
instructions="not countable here (perf stat reports instructions as not supported, or there is no perf)"
if command -v perf > /dev/null && perf stat -x , -e instructions:u true 2>&1 | grep -q '^[0-9]'; then
    count+=(--perf-stat on)
    instructions="counted by perf stat attached to each program"
fi
profiles=""
if command -v perf > /dev/null && perf record -o "$work/probe.data" true > /dev/null 2>&1; then
    mkdir -p "$work/profiles"
    count+=(--profile "$work/profiles")
    profiles="$work/profiles"
fi

# The floors: Benchmarks/Thresholds/cpu.json; the figures they hold go to Benchmarks/Results/cpu.json.
BENCH_METRICS_FILE="$work/metrics.json" "$bin/WorkoutdBenchmarks" "${programs[@]}" "${count[@]}" \
    --rounds "${BENCH_ROUNDS:-3}" --round-trips "${BENCH_ROUND_TRIPS:-20000}" --warm-up "${BENCH_WARM_UP:-2000}" \
    --thresholds cpu | tee "$work/cpu.md"
python3 "$root/Benchmarks/bench_floors.py" record cpu "$work/metrics.json"

{
    cat "$work/cpu.md"
    echo
    echo "Per single-flight command (one line written, its reply read, then the next), totals over every start divided"
    echo "by every start's commands; each program started afresh ${BENCH_ROUNDS:-3} times, in turn, on a new pty, warmed up"
    echo "with ${BENCH_WARM_UP:-2000} round trips, then ${BENCH_ROUND_TRIPS:-20000} measured. CPU: user and system time of"
    echo "every thread (/proc/PID/stat, clock ticks). Mallocs: every allocation call in every thread, counted by a shim"
    echo "loaded with LD_PRELOAD (Benchmarks/peers/malloc-count.c); Python's own small-object allocator takes most of the"
    echo "peer's objects without calling malloc. Instructions: $instructions."
    if [ -n "$profiles" ]; then
        echo
        echo "### Where the time goes"
        echo
        for store in durable in-memory; do
            [ -f "$profiles/$store.data" ] || continue
            python3 "$root/Benchmarks/probes/cpu_profile.py" "workoutd, $store store (perf record -g, 2000 Hz)" \
                "$profiles/$store.data"
        done
        echo "Each profile is a separate start of the daemon, sampled through a single-flight run after its warm-up."
        echo "Functions are demangled with swift-demangle; a sample's phase is the innermost frame of its call chain that"
        echo "matches a phase's module, type or function names (Benchmarks/probes/cpu_profile.py lists them)."
    fi
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh cpu\`). Each floor names the issue that set it"
    echo "(Benchmarks/Thresholds/cpu.json)."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" cpu "CPU, mallocs and instructions per command: workoutd vs the C echoes" "$work/section.md"
