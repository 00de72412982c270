#!/usr/bin/env bash
# Benchmark part `footprint`: what workoutd costs a small always-on hub in disk and memory.
#   - installed size: `make install-files` into a scratch root, every binary stripped (as the .deb ships them);
#   - resident memory of the installed binary serving one pty with the durable store: 15 s after start, right after
#     BENCH_FOOTPRINT_LOAD durable commands (default 100000), and 60 s later; the Python durable peer
#     (Benchmarks/peers/python-durable-peer.py) measured the same way in the same run.
# It builds the release binary as `make install` does (static Swift runtime, .build-release): size and
# file-backed memory depend on that link.
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
make -s release-binary generated-docs >/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-footprint.XXXXXX")
trap 'rm -rf "$work"' EXIT
make -s install-files DESTDIR="$work/root" PREFIX=/usr SYSCONFDIR=/etc >/dev/null
installed=0
listing=""
for file in "$work"/root/usr/bin/*; do
    if [ -L "$file" ]; then
        size=$(stat -c %s "$file")
        listing+="$(basename "$file") → $(readlink "$file") ($size bytes), "
    else
        strip "$file"
        size=$(stat -c %s "$file")
        listing+="$(basename "$file") $(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }'), "
    fi
    installed=$((installed + size))
done

cat > "$work/workoutd.yaml" <<YAML
log_level: warning
YAML
# Measured without the per-device rate limit where the binary has one: a benchmark floods on purpose.
grep -qa limits.commands_per_second "$work/root/usr/bin/workoutd" && printf 'limits:\n  commands_per_second: 0\n' >> "$work/workoutd.yaml"
load=${BENCH_FOOTPRINT_LOAD:-100000}
workoutd="$work/root/usr/bin/workoutd serve --config $work/workoutd.yaml --control-socket none --state-dir {state} --device {device}"
peer="python3 $root/Benchmarks/peers/python-durable-peer.py {device} {state}"
(cd Benchmarks/probes && python3 footprint.py "$workoutd" "$load" 15 60) > "$work/workoutd.json"
(cd Benchmarks/probes && python3 footprint.py "$peer" "$load" 15 60) > "$work/peer.json"

PYTHONPATH="$root/Benchmarks" python3 - "$installed" "$listing" "$work/workoutd.json" "$work/peer.json" "$load" > "$work/section.md" <<'PY'
import json, sys
import bench_floors as floors
installed, listing, ours, peer, load = int(sys.argv[1]), sys.argv[2].rstrip(", "), json.load(open(sys.argv[3])), json.load(open(sys.argv[4])), int(sys.argv[5])
mib = lambda kib: kib / 1024
verdict = floors.verdict
bound = lambda metric: floors.bound("footprint", metric)
idle, after = ours["idle"]["rss_kib"], ours["after"]["rss_kib"]
floors.write_results("footprint", {
    "installed_mb": installed / 1e6,
    "rss_idle_mib": mib(idle),
    "rss_after_load_minus_idle_mib": mib(after - idle),
})
print("| figure | workoutd | Python durable peer | floor | |")
print("|---|---:|---:|---|---|")
print(f"| installed binaries, stripped ({listing}) | {installed / 1e6:.1f} MB | – | ≤ {bound('installed_mb'):g} MB | {verdict(installed / 1e6 <= bound('installed_mb'))} |")
def row(label, key, floor, ok):
    o, p = ours[key], peer[key]
    print(f"| {label} | {mib(o['rss_kib']):.1f} MiB (anon {mib(o['anon_kib']):.1f}, file {mib(o['file_kib']):.1f}) "
          f"| {mib(p['rss_kib']):.1f} MiB (anon {mib(p['anon_kib']):.1f}, file {mib(p['file_kib']):.1f}) | {floor} | {verdict(ok) if ok is not None else ''} |")
row("RSS 15 s after start, one pty, durable store", "idle", f"≤ {bound('rss_idle_mib'):g} MiB", mib(idle) <= bound("rss_idle_mib"))
row(f"RSS right after {load:,} durable commands", "loaded", "–", None)
row("RSS 60 s after that load", "after", f"≤ idle + {bound('rss_after_load_minus_idle_mib'):g} MiB",
    mib(after - idle) <= bound("rss_after_load_minus_idle_mib"))
print(f"| threads / fds at idle | {ours['idle']['threads']} / {ours['idle']['fds']} | {peer['idle']['threads']} / {peer['idle']['fds']} | justified in docs | |")
PY
cat "$work/section.md"
{
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh footprint\`): \`make install-files\` into a scratch root, stripped as \`make deb\`"
    echo "does; VmRSS from /proc/PID/status, the load start/end pairs 1000 in flight; code pages given back when quiet (MemoryRelease.swift)."
} >> "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" footprint "Footprint: installed size and resident memory (issue 17)" "$work/section.md"
