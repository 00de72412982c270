#!/usr/bin/env bash
# Benchmark part `flood`: four devices flood workoutd at full rate (start/end pairs with the longest
# location and id the field limits allow) beside a quiet device sending ten commands a second, first with the
# shipped limits (Config/workoutd.yaml: 100 commands/s per device, burst 1,000), then with the rate limit off.
# Figures: the quiet device's round trip under the flood, and the daemon's peak resident memory and threads,
# which docs/systemd.md ("Memory and task limits") sizes MemoryMax= and TasksMax= from. Needs python3.
#
# Environment: BENCH_FLOOD_SECONDS (each run, default 20), BENCH_FLOOD_DEVICES (flooders, 4),
# BENCH_WORKOUTD (a binary to measure instead of building one).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

workoutd=${BENCH_WORKOUTD:-}
[ -n "$workoutd" ] || workoutd="$(bash "$root/Benchmarks/bench-build.sh" workoutd)/workoutd"

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench-flood.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The shipped defaults (the limits among them), without udev discovery: only the probe's ptys are served.
printf 'log_level: warning\ndiscovery:\n  enabled: false\n' > "$work/limited.yaml"
cp "$work/limited.yaml" "$work/unlimited.yaml"
printf 'limits:\n  commands_per_second: 0\n' >> "$work/unlimited.yaml"
seconds=${BENCH_FLOOD_SECONDS:-20}
devices=${BENCH_FLOOD_DEVICES:-4}

for run in limited unlimited; do
    python3 Benchmarks/probes/flood_probe.py --workoutd "$workoutd" --config "$work/$run.yaml" --state-dir "$work/state-$run" \
        --flooders "$devices" --seconds "$seconds" | sed "s/^{/{\"run\": \"$run\", /" | tee -a "$work/runs.jsonl"
done

python3 - "$work/runs.jsonl" > "$work/section.md" <<'PY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
print("| rate limit | flood lines answered | accepted | rate_limited | quiet device p50 / p99 / max (ms) | quiet errors | RSS before → peak (MiB) | threads before → max | database + WAL (MiB) |")
print("|---|---|---|---|---|---|---|---|---|")
for run in runs:
    replies = run["flood_replies"]
    limit = "100/s, burst 1,000 (default)" if run["run"] == "limited" else "off (`commands_per_second: 0`)"
    print(f"| {limit} | {run['flood_lines_answered']:,} | {replies.get('ok', 0):,} | {replies.get('rate_limited', 0):,} | "
          f"{run['quiet_ms_p50']} / {run['quiet_ms_p99']} / {run['quiet_ms_max']} | {run['quiet_errors']} | "
          f"{run['rss_kib_before'] / 1024:.1f} → {run['rss_kib_peak_vmhwm'] / 1024:.1f} | {run['threads_before']} → {run['threads_max']} | "
          f"{run['database_bytes'] / 1048576:.1f} |")
print()
print(f"Each row: {runs[0]['flooders']} flooding devices for {runs[0]['seconds']:.0f} s, locations of 250 characters "
      "(1,000 bytes) and ids of 110 bytes, beside one quiet device (ten commands a second, one at a time).")
PY
cat "$work/section.md"
{
    cat "$work/section.md"
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh flood\`): flood_probe.py, the shipped defaults; docs/systemd.md sizes \`MemoryMax=\`, \`TasksMax=\` from the peaks."
} > "$work/record.md"
bash "$root/Benchmarks/bench-record.sh" flood "A flooding device beside a quiet one (issue 28)" "$work/record.md"
