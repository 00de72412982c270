#!/usr/bin/env bash
# Benchmark part `many-devices`: 1 to 64 wearables streaming at once into ONE workoutd (in-memory store), each on
# its own pty, beside as many C echoes (Benchmarks/peers/echo-baseline.c, one process per pty) and as many of
# workoutd's session behind an epoll loop (SessionBehindEpoll, the protocol without NIO): the replies of all
# devices together per second, and at 64 devices the round trip of one device sending one command at a time while
# the other 63 stream (Benchmarks/probes/many_devices.py). Needs python3 and a C compiler (cc).
#
# Environment: BENCH_MANY_SECONDS (measured per device count, default 4), BENCH_MANY_DEVICES (the counts,
# default 1,2,4,8,16,32,64), BENCH_WORKOUTD (a binary to measure instead of building one).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

workoutd=${BENCH_WORKOUTD:-}
[ -n "$workoutd" ] || workoutd="$(bash "$root/Benchmarks/bench-build.sh" workoutd)/workoutd"

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench-many.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -o "$work/echo-baseline" Benchmarks/peers/echo-baseline.c
# workoutd's session without NIO, one process per pty as the echoes are: what the protocol itself allows.
peer="$(bash "$root/Benchmarks/bench-build.sh" SessionBehindEpoll)/SessionBehindEpoll"
# As the pty parts measure (Benchmarks/pty-programs.sh): no per-device rate limit or pending-share limit, a
# synchronised clock; without udev discovery, so only the probe's ptys are served.
cat > "$work/workoutd.yaml" <<YAML
log_level: warning
discovery:
  enabled: false
limits:
  commands_per_second: 0
  pending_shares_per_device: 0
clock:
  assume_synchronized: true
YAML
seconds=${BENCH_MANY_SECONDS:-4}
counts=${BENCH_MANY_DEVICES:-1,2,4,8,16,32,64}

python3 Benchmarks/probes/many_devices.py --workoutd "$workoutd" --config "$work/workoutd.yaml" \
    --echo "$work/echo-baseline" --peer "$peer" --state-dir "$work/runs" --devices "$counts" --seconds "$seconds" \
    --warm-up 1 > "$work/run.json"

# The floors: Benchmarks/Thresholds/many-devices.json; the figures they hold go to Benchmarks/Results/many-devices.json.
python3 - "$work/run.json" "$work/metrics.json" > "$work/section.md" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
rows = run["counts"]
metrics = {}
print("| devices | workoutd (commands/s, all devices) | C echoes (commands/s) | workoutd / echoes | workoutd CPU | echoes' CPU |"
      " every CPU busy: workoutd / echoes | driver's CPU: workoutd / echoes |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for row in rows:
    n, w, e = row["devices"], row["workoutd"], row["echo"]
    print(f"| {n} | {w['aggregate_per_second']:,} | {e['aggregate_per_second']:,} | {row['ratio']:.2f} | "
          f"{w['server_cpu_percent']:.0f} % | {e['server_cpu_percent']:.0f} % | "
          f"{w['machine_cpu_percent']:.0f} % / {e['machine_cpu_percent']:.0f} % | "
          f"{w['driver_cpu_percent']:.0f} % / {e['driver_cpu_percent']:.0f} % |")
    metrics[f"many_devices_workoutd_aggregate_{n}"] = w["aggregate_per_second"]
    metrics[f"many_devices_echo_aggregate_{n}"] = e["aggregate_per_second"]
    metrics[f"many_devices_aggregate_over_echo_{n}"] = row["ratio"]
print()
if all("peer" in row for row in rows):
    print("The protocol without NIO: workoutd's session behind an epoll loop of its own (SessionBehindEpoll, in-memory"
          " store), one process per pty as the echoes are, counted in the same run:")
    print()
    print("| devices | session peers (commands/s, all devices) | peers / echoes | workoutd / peers | peers' CPU |"
          " every CPU busy | driver's CPU |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        n, w, p = row["devices"], row["workoutd"], row["peer"]
        print(f"| {n} | {p['aggregate_per_second']:,} | {row['peer_ratio']:.2f} | "
              f"{w['aggregate_per_second'] / p['aggregate_per_second']:.2f} | {p['server_cpu_percent']:.0f} % | "
              f"{p['machine_cpu_percent']:.0f} % | {p['driver_cpu_percent']:.0f} % |")
        metrics[f"many_devices_peer_aggregate_{n}"] = p["aggregate_per_second"]
        metrics[f"many_devices_peer_over_echo_{n}"] = row["peer_ratio"]
    print()
largest = rows[-1]
n = largest["devices"]
if "busy" in largest["workoutd"]:
    w, e = largest["workoutd"]["busy"], largest["echo"]["busy"]
    print(f"One device of {n} in single flight (one command, its reply, the next) while the other {n - 1} stream:")
    print()
    print("| server | round trips | p50 (µs) | p99 (µs) | max (µs) |")
    print("|---|---:|---:|---:|---:|")
    print(f"| workoutd | {w['commands']:,} | {w['p50_us']:,.0f} | {w['p99_us']:,.0f} | {w['max_us']:,.0f} |")
    print(f"| C echoes | {e['commands']:,} | {e['p50_us']:,.0f} | {e['p99_us']:,.0f} | {e['max_us']:,.0f} |")
    if "busy" in largest.get("peer", {}):
        p = largest["peer"]["busy"]
        print(f"| session peers | {p['commands']:,} | {p['p50_us']:,.0f} | {p['p99_us']:,.0f} | {p['max_us']:,.0f} |")
        metrics[f"many_devices_peer_busy_p99_us_{n}"] = p["p99_us"]
    print()
    metrics.update({
        f"many_devices_workoutd_busy_p50_us_{n}": w["p50_us"], f"many_devices_workoutd_busy_p99_us_{n}": w["p99_us"],
        f"many_devices_echo_busy_p50_us_{n}": e["p50_us"], f"many_devices_echo_busy_p99_us_{n}": e["p99_us"],
        f"many_devices_busy_p99_over_echo_{n}": round(w["p99_us"] / e["p99_us"], 3),
    })
peers = ", then one session peer per pty" if all("peer" in row for row in rows) else ""
print(f"Each count: one workoutd started with one `--device` per pty (`--in-memory`, no rate or pending-share limit),"
      f" then one C echo process per pty{peers};"
      f" every device streams the pty bench's start/end/share mix with up to"
      f" {run['window']} commands outstanding, warmed up {run['warm_up']:g} s, then {run['seconds']:g} s counted."
      f" CPU in percent of one core ({run['cpus']} here): the server's own (daemon, every echo or every peer),"
      " every CPU's busy time (the kernel's pty work runs in kworkers, counted by neither side) and the Python"
      " driver's.")
json.dump(metrics, open(sys.argv[2], "w"))
PY
cat "$work/section.md"
python3 "$root/Benchmarks/bench_floors.py" record many-devices "$work/metrics.json"
{
    cat "$work/section.md"
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh many-devices\`): Benchmarks/probes/many_devices.py;"
    echo "floors: Benchmarks/Thresholds/many-devices.json."
} > "$work/record.md"
bash "$root/Benchmarks/bench-record.sh" many-devices "Many busy devices: one workoutd beside one C echo per pty" "$work/record.md"
