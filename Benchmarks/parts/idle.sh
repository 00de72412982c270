#!/usr/bin/env bash
# Benchmark part `idle`: wakeups per second of the whole workoutd process while nothing happens,
# with the watchdog on as systemd turns it on (NOTIFY_SOCKET, WATCHDOG_USEC at the unit's WatchdogSec=,
# WATCHDOG_PID), the shipped configuration (discovery on, spool share sink), the durable store, and 1 and
# then 64 ptys attached. Wakeups are the kernel's context-switch counters of every thread over the period
# (Benchmarks/probes/daemon_probe.py); threads and open fds are counted at the end. Needs python3.
#
# Environment: BENCH_IDLE_SECONDS (measured period, default 30), BENCH_IDLE_DEVICES ("1 64"), BENCH_WORKOUTD.
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

# BENCH_WORKOUTD: a workoutd already built (nothing is built then).
workoutd=${BENCH_WORKOUTD:-}
[ -n "$workoutd" ] || workoutd="$(bash "$root/Benchmarks/bench-build.sh" workoutd)/workoutd"

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench-idle.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp Config/workoutd.yaml "$work/workoutd.yaml"
watchdog_sec=$(sed -n 's/^WatchdogSec=\([0-9]*\)s\{0,1\}$/\1/p' systemd/workoutd.service | head -n 1)
watchdog_sec=${watchdog_sec:-10}
seconds=${BENCH_IDLE_SECONDS:-30}

for devices in ${BENCH_IDLE_DEVICES:-1 64}; do
    python3 Benchmarks/probes/daemon_probe.py idle --workoutd "$workoutd" --config "$work/workoutd.yaml" \
        --state-dir "$work/state-$devices" --devices "$devices" --seconds "$seconds" --watchdog-sec "$watchdog_sec" \
        | tee -a "$work/runs.jsonl"
done

PYTHONPATH="$root/Benchmarks" python3 - "$work/runs.jsonl" > "$work/section.md" <<'PY'
import json, sys
import bench_floors as floors
runs = [json.loads(line) for line in open(sys.argv[1])]
metrics = {"wakeups_per_second_first_run": runs[0]["wakeups_per_second"], "wakeups_per_second_last_run": runs[-1]["wakeups_per_second"]}
if len(runs) >= 2:
    one, many = runs[0]["wakeups_per_second"], runs[-1]["wakeups_per_second"]
    metrics["wakeups_many_over_one_device"] = many / one if one > 0 else (0.0 if many == 0 else float("inf"))
    metrics["wakeups_many_minus_one_device"] = many - one
def floor_of(index):
    return floors.bound("idle", "wakeups_per_second_first_run" if index == 0 else "wakeups_per_second_last_run")
print(f"| devices attached | wakeups/s (floor ≤ {floor_of(0):g}) | | threads at idle | open fds | watchdog pings in the period | wakeups by thread over the period |")
print("|---|---|---|---|---|---|---|")
for index, run in enumerate(runs):
    verdict = floors.verdict(run["wakeups_per_second"] <= floor_of(index))
    who = ", ".join(f"{name} {count}" for name, count in sorted(run["switches_by_thread"].items(), key=lambda kv: -kv[1]))
    print(f"| {run['devices']} | {run['wakeups_per_second']:.2f} | {verdict} | {run['threads']} | {run['fds']} | "
          f"{run['watchdog_pings']} (WatchdogSec={run['watchdog_sec']}s) | {who} |")
notes = [f"Each row: {runs[0]['seconds']:.0f} s without traffic, after every device answered one command and 3 s to settle."]
if len(runs) >= 2:
    one, many = runs[0], runs[-1]
    relative, noise = floors.bound("idle", "wakeups_many_over_one_device"), floors.bound("idle", "wakeups_many_minus_one_device")
    verdict = floors.verdict(many["wakeups_per_second"] <= max(one["wakeups_per_second"] * relative, one["wakeups_per_second"] + noise))
    notes.append(f"{many['devices']} devices against {one['devices']}: {many['wakeups_per_second']:.2f} vs {one['wakeups_per_second']:.2f} wakeups/s "
                 f"(floor: no more than one device, within counting noise of {noise:g}/s): {verdict}.")
print()
print(" ".join(notes))
floors.write_results("idle", metrics)
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
