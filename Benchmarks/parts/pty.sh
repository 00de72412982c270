#!/usr/bin/env bash
# Benchmark part `pty` (issue 2): pipelined throughput and single-flight latency of workoutd through a
# real pty, beside the C echo baseline (Benchmarks/peers/echo-baseline.c) driven the same way in the same run, and the
# same echo over workoutd's own transport (NIOEchoBaseline), against which issue 17 re-anchors latency.
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
# Measured without the per-device rate limit (issue 28) where the binary has one: a benchmark floods on purpose.
# Nor the pending-share limit: a pipelined round queues a share every third command, faster than delivery waits for.
limits=""
grep -qa limits.commands_per_second "${BENCH_WORKOUTD:-$bin/workoutd}" && limits+="  commands_per_second: 0\n"
grep -qa limits.pending_shares_per_device "${BENCH_WORKOUTD:-$bin/workoutd}" && limits+="  pending_shares_per_device: 0\n"
if [ -n "$limits" ]; then printf 'limits:\n%b' "$limits" >> "$work/workoutd.yaml"; fi
# A synchronised clock, as on a hub after NTP: where it reads unsynchronised (a container) every workout would
# also write its clock mark (issue 30), a page more per start or end.
grep -qa clock.assume_synchronized "${BENCH_WORKOUTD:-$bin/workoutd}" && printf 'clock:\n  assume_synchronized: true\n' >> "$work/workoutd.yaml"
workoutd=("${BENCH_WORKOUTD:-$bin/workoutd}" serve --config "$work/workoutd.yaml")
help=$("$bin/workoutd" serve --help 2>&1)
# Its own control socket, so a daemon already running on this machine is neither disturbed nor in the way.
if grep -q -- '--control-socket' <<< "$help"; then workoutd+=(--control-socket "$work/control.sock"); fi

programs=(--baseline "echo baseline (C)=$work/echo-baseline {device}")
# The same echo over workoutd's transport (SerialPort + NIOPipeBootstrap): separates the event loop's cost from the protocol's.
programs+=(--reference "echo over NIO (workoutd's transport)=$bin/NIOEchoBaseline {device}")
# Issue 31's anchors for the durable store, their files beside its database (same file system): the physical
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

"$bin/WorkoutdBenchmarks" "${programs[@]}" \
    --commands "${BENCH_COMMANDS:-100000}" --rounds "${BENCH_ROUNDS:-3}" \
    --round-trips "${BENCH_ROUND_TRIPS:-20000}" --warm-up "${BENCH_WARM_UP:-2000}" | tee "$work/pty.md"

{
    cat "$work/pty.md"
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh pty\`). The echo baseline answers every line with one fixed"
    echo "reply, i.e. the limit of a pty on this machine; floors from issue 2 (and issue 4 for the durable store),"
    echo "and issue 17's: in-memory throughput ≥ 0.3 of the C echo, single-flight p50 ≤ 1.2× and p99 ≤ 1.3× the echo over NIO."
    echo "The echo over NIO (Benchmarks/Sources/NIOEchoBaseline) gives the same reply through workoutd's own transport"
    echo "(the tty opened by SerialPort, one NIOPipeBootstrap channel), so what lies between it and workoutd is the protocol:"
    echo "framing, decoding, the session, storage, events, encoding and share delivery."
    echo "Each round and the latency run start the program afresh on a new pty (workoutd with a new state directory),"
    echo "so none inherits the share backlog of the one before. Share delivery waits for the devices to pause (50 ms"
    echo "without a batch, at most 2 s). The load here never pauses: the in-memory runs end within 2 s, so their"
    echo "shares wait (and an in-memory store's are dropped with it); the durable store's latency run (several seconds)"
    echo "has a delivery pass every 2 s beside its commands."
    echo "Issue 31 anchors the durable store on the C durable echo (Benchmarks/peers/durable-echo.c: appends each read to a file,"
    echo "fdatasync, then acks, so lines that arrive together share one sync) and the Python durable peer"
    echo "(Benchmarks/peers/python-durable-peer.py), their files on the same file system as the daemon's database: durable"
    echo "single-flight p50 ≤ 1.2× the durable echo and below the peer, p99 ≤ 1.5× the echo, pipelined durable"
    echo "throughput ≥ 0.5× the same run's in-memory figure and ≥ 0.5× the durable echo."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" pty "Serial pipeline through a pty: workoutd vs echo baseline" "$work/section.md"
