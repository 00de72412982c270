#!/usr/bin/env bash
# Benchmark part `pty`: pipelined throughput and single-flight latency of workoutd through a
# real pty, beside the C echo baseline (Benchmarks/peers/echo-baseline.c) driven the same way in the same run, and the
# same echo over workoutd's own transport (NIOEchoBaseline), against which latency is also held, and workoutd's session
# behind an epoll loop without NIO (SessionBehindEpoll), the protocol's floor.
# Run through `bash Benchmarks/bench.sh pty`; needs a C compiler (cc).
#
# Environment: BENCH_COMMANDS (pipelined commands per round, default 100000), BENCH_ROUNDS (3),
# BENCH_ROUND_TRIPS (20000), BENCH_WARM_UP (2000).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd WorkoutdBenchmarks NIOEchoBaseline SessionBehindEpoll)

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The programs measured: "${programs[@]}" (Benchmarks/pty-programs.sh).
# shellcheck source=Benchmarks/pty-programs.sh
source "$root/Benchmarks/pty-programs.sh"
# workoutd's session behind an epoll loop of its own, over each store: what the protocol allows without NIO's loop,
# for throughput and latency alike. More references: the echo over NIO stays the first.
programs+=(--reference "session behind epoll, in-memory store (no NIO)=$bin/SessionBehindEpoll {device}")
programs+=(--reference \
    "session behind epoll, durable store (no NIO)=$bin/SessionBehindEpoll {device} $work/session-durable-{run}")

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
    echo "durable peer commits sqlite3 rows (synchronous=FULL); both on the daemon's file system (Benchmarks/peers). The"
    echo "sessions behind epoll are workoutd's own framing, decoding, session, store and encoding served from an epoll"
    echo "loop without NIO (Benchmarks/Sources/SessionBehindEpoll), the durable one committing each read's lines in place:"
    echo "the protocol's floor. Each floor names the issue that set it (Benchmarks/Thresholds/pty.json)."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" pty "Serial pipeline through a pty: workoutd vs echo baseline" "$work/section.md"
