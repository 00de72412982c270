#!/usr/bin/env bash
# Benchmark part `sdcard`: what the storage costs an SD card per durable acked command, workoutd
# beside the Python durable peer (Benchmarks/peers/python-durable-peer.py: sqlite3, WAL, synchronous=FULL, one transaction
# per read batch) in the same run: bytes the kernel wrote (/proc/PID/io write_bytes), state-directory growth,
# pwrite and fsync-family calls (strace -f -c on every thread), in single flight and pipelined.
# Environment: BENCH_SDCARD_COMMANDS (commands per phase, default 2000). Needs strace and root (ptrace).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
# The binary as installed (`make install`, .build-release), as in part footprint.
make -s release-binary generated-docs >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-sdcard.XXXXXX")
trap 'rm -rf "$work"' EXIT
make -s install-files DESTDIR="$work/root" PREFIX=/usr SYSCONFDIR=/etc >/dev/null
bin=$work/root/usr/bin
cat > "$work/workoutd.yaml" <<YAML
log_level: warning
YAML
# Measured without the per-device rate limit where the binary has one: a benchmark floods on purpose.
grep -qa limits.commands_per_second "$bin/workoutd" && printf 'limits:\n  commands_per_second: 0\n' >> "$work/workoutd.yaml"
# A synchronised clock, as on a hub after NTP: where it reads unsynchronised (a container) every workout would
# also write its clock mark, a page more per start or end.
grep -qa clock.assume_synchronized "$bin/workoutd" && printf 'clock:\n  assume_synchronized: true\n' >> "$work/workoutd.yaml"
count=${BENCH_SDCARD_COMMANDS:-2000}
# The figures beside an empty database and beside 20,000 and 200,000 stored workouts.
export BENCH_SDCARD_STORED=${BENCH_SDCARD_STORED:-0,20000,200000}
(cd Benchmarks/probes && python3 sdcard-writes.py "$count" \
    "Python durable peer=python3 $root/Benchmarks/peers/python-durable-peer.py {device} {state}" \
    "workoutd=$bin/workoutd serve --config $work/workoutd.yaml --control-socket none --state-dir {state} --device {device}") \
    | tee "$work/table.md"

PYTHONPATH="$root/Benchmarks" python3 - "$work/table.md" > "$work/verdict.md" <<'PY'
import sys
import bench_floors as floors
rows = {}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 8 and cells[1] in ("single", "pipelined"):
        rows[(cells[0], cells[1], int(cells[2]))] = [float(c) for c in cells[3:]]
stored = sorted({key[2] for key in rows})
ours, peer = rows[("workoutd", "single", stored[0])], rows[("Python durable peer", "single", stored[0])]
piped = rows[("workoutd", "pipelined", stored[0])]
verdict = floors.verdict
bound = lambda metric, kind=None: floors.bound("sdcard", metric, kind)
print()
print("| floor | workoutd | Python durable peer | |")
print("|---|---:|---:|---|")
# One row for every stored count: the table above keeps the first count's rows only.
kb = lambda program: " / ".join(f"{rows[(program, 'single', n)][0]:.2f}" for n in stored)
over_peer = max(rows[("workoutd", "single", n)][0] / rows[("Python durable peer", "single", n)][0] for n in stored)
floors.write_results("sdcard", {
    "kb_per_single_command_over_peer": over_peer,
    "fsyncs_per_single_command": ours[3],
    "fsyncs_per_pipelined_command": piped[3],
})
met = over_peer <= bound("kb_per_single_command_over_peer")
print(f"| KB written per single-flight command ≤ the peer's, {' / '.join(str(n) for n in stored)} workouts stored | {kb('workoutd')} | {kb('Python durable peer')} | {verdict(met)} |")
single_ok = bound("fsyncs_per_single_command", "min") <= ours[3] <= bound("fsyncs_per_single_command", "max")
print(f"| fsync-family calls per single-flight command ≤ 1 (and ≥ 1: acked means synced) | {ours[3]:.3f} | {peer[3]:.3f} | {verdict(single_ok)} |")
piped_floor = bound("fsyncs_per_pipelined_command")
print(f"| fsync-family calls per pipelined command well below 1 (≤ {piped_floor:g}) | {piped[3]:.3f} | {rows[('Python durable peer', 'pipelined', stored[0])][3]:.3f} | {verdict(piped[3] <= piped_floor)} |")
PY
cat "$work/verdict.md"
{
    # The per-program rows of single flight beside the first stored count only: the floor rows give the KB written
    # beside the others and the syncs of pipelined commands.
    first=${BENCH_SDCARD_STORED%%,*}
    awk -F'|' -v first="$first" 'NF < 9 || $4 !~ /^ *[0-9]+ *$/ || ($4 + 0 == first && $3 ~ /single/)' "$work/table.md"
    cat "$work/verdict.md"
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh sdcard\`, Benchmarks/probes/sdcard-writes.py): each program on a fresh pty and"
    echo "state directory under /var/tmp (ext4), $count start/end commands single-flight, then $count pipelined; write_bytes counts 4 KiB pages."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" sdcard "SD-card writes per durable command: workoutd vs Python durable peer (issue 17)" "$work/section.md"
