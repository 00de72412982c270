#!/usr/bin/env bash
# Benchmark part `idle`: wakeups per second of the whole workoutd process while nothing happens,
# with the watchdog on as systemd turns it on (NOTIFY_SOCKET, WATCHDOG_USEC at the unit's WatchdogSec=,
# WATCHDOG_PID), the shipped configuration (discovery on, spool share sink), the durable store, and 1 and
# then 64 ptys attached. Wakeups are the kernel's context-switch counters of every thread over the period
# (Benchmarks/probes/daemon_probe.py); threads and open fds are counted at the end. Needs python3.
#
# Environment: BENCH_IDLE_SECONDS (measured period, default 30), BENCH_IDLE_DEVICES ("1 64").
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd)

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench-idle.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp Config/workoutd.yaml "$work/workoutd.yaml"
watchdog_sec=$(sed -n 's/^WatchdogSec=\([0-9]*\)s\{0,1\}$/\1/p' systemd/workoutd.service | head -n 1)
watchdog_sec=${watchdog_sec:-10}
seconds=${BENCH_IDLE_SECONDS:-30}

for devices in ${BENCH_IDLE_DEVICES:-1 64}; do
    python3 Benchmarks/probes/daemon_probe.py idle --workoutd "${BENCH_WORKOUTD:-$bin/workoutd}" --config "$work/workoutd.yaml" \
        --state-dir "$work/state-$devices" --devices "$devices" --seconds "$seconds" --watchdog-sec "$watchdog_sec" \
        | tee -a "$work/runs.jsonl"
done

python3 - "$work/runs.jsonl" > "$work/section.md" <<'PY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
floor = 1.5
print("| devices attached | wakeups/s (floor ≤ 1.5) | | threads at idle | open fds | watchdog pings in the period | wakeups by thread over the period |")
print("|---|---|---|---|---|---|---|")
for run in runs:
    verdict = "PASS" if run["wakeups_per_second"] <= floor else "MISS"
    who = ", ".join(f"{name} {count}" for name, count in sorted(run["switches_by_thread"].items(), key=lambda kv: -kv[1]))
    print(f"| {run['devices']} | {run['wakeups_per_second']:.2f} | {verdict} | {run['threads']} | {run['fds']} | "
          f"{run['watchdog_pings']} (WatchdogSec={run['watchdog_sec']}s) | {who} |")
notes = [f"Each row: {runs[0]['seconds']:.0f} s without traffic, after every device answered one command and 3 s to settle."]
if len(runs) >= 2:
    one, many = runs[0], runs[-1]
    verdict = "PASS" if many["wakeups_per_second"] <= max(one["wakeups_per_second"] * 1.1, one["wakeups_per_second"] + 0.2) else "MISS"
    notes.append(f"{many['devices']} devices against {one['devices']}: {many['wakeups_per_second']:.2f} vs {one['wakeups_per_second']:.2f} wakeups/s "
                 f"(floor: no more than one device, within counting noise of 0.2/s): {verdict}.")
print()
print(" ".join(notes))
PY
cat "$work/section.md"
{
    cat "$work/section.md"
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh idle\`): daemon_probe.py, the release build as systemd runs it, context switches of every thread."
    # The threads, as many with 64 devices as with one (checked by hand; the footprint part points here).
    echo "Threads: main; NIO loops \`NIO-SGLTN-1-#1\`, \`#2\` (devices, sessions, control socket), \`NIO-ELT-2-#1\` (share delivery, \`SCHED_IDLE\`);"
    echo "libdispatch's overcommit thread (udev, GRDB, a 1/s pool tick), 0–2 pool workers. The watchdog adds 4–5 per \`WatchdogSec=\`/2: 30 s."
} > "$work/record.md"
bash "$root/Benchmarks/bench-record.sh" idle "Idle wakeups, threads and fds (watchdog on)" "$work/record.md"
