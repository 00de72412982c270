# Sourced by the pty-path parts (parts/pty.sh, parts/cpu.sh): builds the C peers and sets `programs`, the
# WorkoutdBenchmarks arguments naming every program measured on the pty path: the C echo, the echo over NIO, the C
# durable echo, the Python durable peer and workoutd with its in-memory and its durable store, each configured the
# same way for every part. Needs root, bin (bench-build.sh's directory, with workoutd and NIOEchoBaseline built) and
# work (a scratch directory on the file system measured).
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

