#!/usr/bin/env bash
# Benchmark part `pty`: pipelined throughput and single-flight latency of workoutd through a
# real pty, beside the C echo baseline (Benchmarks/peers/echo-baseline.c) driven the same way in the same run, and the
# same echo over workoutd's own transport (NIOEchoBaseline), against which latency is also held.
# Run through `bash Benchmarks/bench.sh pty`; needs a C compiler (cc).
#
# Environment: BENCH_COMMANDS (pipelined commands per round, default 100000), BENCH_ROUNDS (3),
# BENCH_ROUND_TRIPS (20000), BENCH_WARM_UP (2000).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd WorkoutdBenchmarks NIOEchoBaseline)

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -o "$work/echo-baseline" Benchmarks/peers/echo-baseline.c
cc -O2 -Wall -o "$work/durable-echo" Benchmarks/peers/durable-echo.c

# An explicit configuration, so /etc/workoutd/workoutd.yaml on this machine cannot change what is measured.
cat > "$work/workoutd.yaml" <<YAML
log_level: info
YAML
# Measured without the per-device rate limit where the binary has one: a benchmark floods on purpose.
# Nor the pending-share limit: a pipelined round queues a share every third command, faster than delivery waits for.
limits=""
grep -qa limits.commands_per_second "${BENCH_WORKOUTD:-$bin/workoutd}" && limits+="  commands_per_second: 0\n"
grep -qa limits.pending_shares_per_device "${BENCH_WORKOUTD:-$bin/workoutd}" && limits+="  pending_shares_per_device: 0\n"
if [ -n "$limits" ]; then printf 'limits:\n%b' "$limits" >> "$work/workoutd.yaml"; fi
# A synchronised clock, as on a hub after NTP: where it reads unsynchronised (a container) every workout would
# also write its clock mark, a page more per start or end.
grep -qa clock.assume_synchronized "${BENCH_WORKOUTD:-$bin/workoutd}" && printf 'clock:\n  assume_synchronized: true\n' >> "$work/workoutd.yaml"
workoutd=("${BENCH_WORKOUTD:-$bin/workoutd}" serve --config "$work/workoutd.yaml")
help=$("$bin/workoutd" serve --help 2>&1)
# Its own control socket, so a daemon already running on this machine is neither disturbed nor in the way.
if grep -q -- '--control-socket' <<< "$help"; then workoutd+=(--control-socket "$work/control.sock"); fi

programs=(--baseline "echo baseline (C)=$work/echo-baseline {device}")
# The same echo over workoutd's transport (SerialPort + NIOPipeBootstrap): separates the event loop's cost from the protocol's.
programs+=(--reference "echo over NIO (workoutd's transport)=$bin/NIOEchoBaseline {device}")
# The anchors for the durable store, their files beside its database (same file system): the physical
# limit (a write and an fdatasync per read, then the acks) and the Python durable peer (sqlite3, synchronous=FULL).
programs+=(--durable-echo "durable echo (C)=$work/durable-echo {device} $work/echo-{run}")
programs+=(--durable-peer "Python durable peer=python3 $root/Benchmarks/peers/python-durable-peer.py {device} $work/peer-{run}")
# With durable storage the daemon offers an in-memory store for exactly this comparison; both are measured.
if grep -q -- '--in-memory' <<< "$help"; then
    programs+=(--subject "workoutd, in-memory store=${workoutd[*]} --in-memory --state-dir $work/memory-{run} --device {device}")
    programs+=(--durable "workoutd, durable store=${workoutd[*]} --state-dir $work/durable-{run} --device {device}")
else
    programs+=(--subject "workoutd (in-memory store)=${workoutd[*]} --state-dir $work/state --device {device}")
fi

# The floors: Benchmarks/Thresholds/pty.json; the figures they hold go to Benchmarks/Results/pty.json.
BENCH_METRICS_FILE="$work/metrics.json" "$bin/WorkoutdBenchmarks" "${programs[@]}" \
    --commands "${BENCH_COMMANDS:-100000}" --rounds "${BENCH_ROUNDS:-3}" \
    --round-trips "${BENCH_ROUND_TRIPS:-20000}" --warm-up "${BENCH_WARM_UP:-2000}" --thresholds pty | tee "$work/pty.md"
python3 "$root/Benchmarks/bench_floors.py" record pty "$work/metrics.json"

{
    # The ratios without a floor are left out: the floors are what this part decides.
    grep -v -E '^\| [^|]+ \| [0-9.]+ \| \| \|$' "$work/pty.md"
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh pty\`); every round starts the program afresh on a new pty. The"
    echo "C echo (the pty's limit) and the echo over NIO (workoutd's transport: the rest is the protocol) answer each line"
    echo "with a fixed reply; the C durable echo appends each read to a file and fdatasyncs it before acking; the Python"
    echo "durable peer commits sqlite3 rows (synchronous=FULL); both on the daemon's file system (Benchmarks/peers). Each"
    echo "floor names the issue that set it (Benchmarks/Thresholds/pty.json)."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" pty "Serial pipeline through a pty: workoutd vs echo baseline" "$work/section.md"
