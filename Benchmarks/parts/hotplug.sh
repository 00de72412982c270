#!/usr/bin/env bash
# Benchmark part `hotplug`: time from the udev add event to the first command acknowledged on
# that device (p50/p99 over repeated plugs), and aggregate throughput of 16 busy devices vs one device,
# in the same run. libudev is real; the devices live in a umockdev testbed, so it runs under umockdev-wrapper.
# Run through `bash Benchmarks/bench.sh hotplug`; needs the Debian packages umockdev and libumockdev-dev.
#
# Environment: BENCH_PLUGS (default 200), BENCH_DEVICES (16), BENCH_DEVICE_COMMANDS (20000 per device).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

bin=$(bash "$root/Benchmarks/bench-build.sh" HotplugBenchmark)

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

BENCH_METRICS_FILE="$work/metrics.json" umockdev-wrapper "$bin/HotplugBenchmark" \
    --plugs "${BENCH_PLUGS:-200}" --devices "${BENCH_DEVICES:-16}" --commands "${BENCH_DEVICE_COMMANDS:-20000}" \
    | tee "$work/hotplug.md"
python3 "$root/Benchmarks/bench_floors.py" record hotplug "$work/metrics.json"

{
    # HotplugBenchmark's rows in three: the latency's p50 / p99 / max in one, the two throughputs in one; its closing
    # note on the commands starts the Command paragraph.
    awk -F' [|] ' '
        /^[|] udev add → first ack, p50 / { p50 = $2; next }
        /^[|] udev add → first ack, p99 / { p99 = $2; floor = $3; next }
        /^[|] udev add → first ack, max / { printf "| udev add → first ack, p50 / p99 / max | %s / %s / %s | p99 %s\n", p50, p99, $2, floor; next }
        /^[|] 1 device, commands[/]s / { one = $2; next }
        /devices at once, aggregate commands[/]s / { sub(/^[|] /, "", $1); sub(/, aggregate commands[/]s$/, " (aggregate)", $1)
                                                    printf "| commands/s: 1 device / %s | %s / %s | |\n", $1, one, $2; next }
        { print }' "$work/hotplug.md"
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh hotplug\`): umockdev mock ttys announced with real uevents to the daemon's"
    echo "libudev monitor; discovery, device manager and engine (in-memory store) in-process. Floors: Benchmarks/Thresholds/hotplug.json."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" hotplug "Hotplug: udev add to first ack, 16 devices vs 1" "$work/section.md"
