#!/usr/bin/env bash
# Benchmark part `startup`: exec → READY=1 and READY=1 → the first reply on an attached pty, with
# 100,000 stored workouts, from a cold page cache (sync; echo 3 > /proc/sys/vm/drop_caches: needs root) and a
# warm one. The database is made by the daemon (its own schema and migrations) and then filled through
# Python's sqlite3 in one transaction (Benchmarks/probes/daemon_probe.py seed). Needs python3.
#
# Environment: BENCH_STARTUP_WORKOUTS (100000), BENCH_STARTUP_ROUNDS (3 of each).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd)
workoutd=${BENCH_WORKOUTD:-$bin/workoutd}

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp Config/workoutd.yaml "$work/workoutd.yaml"
probe=(python3 Benchmarks/probes/daemon_probe.py)
state=$work/state

"${probe[@]}" startup --workoutd "$workoutd" --config "$work/workoutd.yaml" --state-dir "$state" > /dev/null  # creates the schema
"${probe[@]}" seed --state-dir "$state" --workouts "${BENCH_STARTUP_WORKOUTS:-100000}" | tee "$work/seed.json"

cold=(--drop-caches)
if [ "$(id -u)" != 0 ] || ! [ -w /proc/sys/vm/drop_caches ]; then
    echo "startup: cannot drop the page cache (needs root); the cold rows are missing" >&2
    cold=()
fi
for round in $(seq "${BENCH_STARTUP_ROUNDS:-3}"); do
    if [ ${#cold[@]} -gt 0 ]; then
        "${probe[@]}" startup --workoutd "$workoutd" --config "$work/workoutd.yaml" --state-dir "$state" "${cold[@]}" | tee -a "$work/runs.jsonl"
    fi
    "${probe[@]}" startup --workoutd "$workoutd" --config "$work/workoutd.yaml" --state-dir "$state" | tee -a "$work/runs.jsonl"
done

PYTHONPATH="$root/Benchmarks" python3 - "$work/seed.json" "$work/runs.jsonl" > "$work/section.md" <<'PY'
import json, statistics, sys
import bench_floors as floors
seed = json.load(open(sys.argv[1]))
runs = [json.loads(line) for line in open(sys.argv[2])]
ready_floor = floors.bound("startup", "exec_to_ready_median_s_warm")
reply_floor = floors.bound("startup", "ready_to_first_reply_median_s_warm")
print(f"| page cache | runs | exec → READY=1, median (max) | floor ≤ {ready_floor:g} s | READY=1 → first reply, median (max) | floor ≤ {reply_floor:g} s |")
print("|---|---|---|---|---|---|")
metrics = {}
for cold in (True, False):
    chosen = [run for run in runs if run["cold"] == cold]
    if not chosen:
        continue
    cache = "cold" if cold else "warm"
    ready = [run["exec_to_ready"] for run in chosen]
    reply = [run["ready_to_first_reply"] for run in chosen]
    metrics[f"exec_to_ready_median_s_{cache}"] = statistics.median(ready)
    metrics[f"ready_to_first_reply_median_s_{cache}"] = statistics.median(reply)
    ready_ok = statistics.median(ready) <= floors.bound("startup", f"exec_to_ready_median_s_{cache}")
    reply_ok = statistics.median(reply) <= floors.bound("startup", f"ready_to_first_reply_median_s_{cache}")
    print(f"| {cache} | {len(chosen)} | {statistics.median(ready):.3f} s ({max(ready):.3f}) | "
          f"{floors.verdict(ready_ok)} | {statistics.median(reply):.3f} s ({max(reply):.3f}) | "
          f"{floors.verdict(reply_ok)} |")
floors.write_results("startup", metrics)
print()
print(f"{seed['workouts']:,} stored workouts, database {seed['bytes'] / 2**20:.1f} MiB.", end=" ")
PY
cat "$work/section.md"
{
    cat "$work/section.md"
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh startup\`): daemon_probe.py starts the"
    echo "release build as systemd does (Type=notify) with one pty: exec → READY=1, then one start_workout's reply; cold: page cache dropped first."
} > "$work/record.md"
bash "$root/Benchmarks/bench-record.sh" startup "Start-up with 100,000 stored workouts" "$work/record.md"
