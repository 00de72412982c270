#!/usr/bin/env bash
# Profiles workoutd's hot path with callgrind (instruction counts are repeatable on noisy machines) and
# records instructions per command in docs/benchmarks.md (section `pty-profile`).
#
#   bash Benchmarks/bench-profile.sh [COMMANDS]      (default 20000)
#
# Three runs of the daemon under callgrind, driven by WorkoutdBenchmarks over a pty: a minimal one, one
# with COMMANDS pipelined commands, one with COMMANDS single-flight round trips. The differences divided
# by COMMANDS are the marginal instructions per command, free of start-up and shutdown. The annotated
# profiles (hottest functions, demangled) are left in $BENCH_PROFILE_DIR (default .build-bench/profile).
#
# Known problem: Debian 12's valgrind 3.19 crashes inside itself (SIGSEGV, even with --tool=none) on the
# workoutd binary, so on such a machine this script stops with "no profile from the minimal run".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scratch=${BENCH_SCRATCH:-$root/.build-bench}
count=${1:-20000}
out=${BENCH_PROFILE_DIR:-$scratch/profile}
cd "$root"
command -v valgrind > /dev/null || { echo "bench-profile: needs valgrind (apt-get install -y valgrind)" >&2; exit 69; }

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd WorkoutdBenchmarks)
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-profile.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/echo-baseline" Benchmarks/peers/echo-baseline.c
printf 'log_level: info\n' > "$work/workoutd.yaml"
# Valgrind 3.19 cannot read the DWARF 5 that Swift 6 emits and gives up; the symbol table is enough for
# function-level counts, so profile a copy without debug information.
strip --strip-debug -o "$work/workoutd" "${BENCH_WORKOUTD:-$bin/workoutd}"
store=(--state-dir "$work/state")
help=$("$bin/workoutd" serve --help 2>&1)
if grep -q -- '--in-memory' <<< "$help"; then store=(--in-memory); fi
if grep -q -- '--control-socket' <<< "$help"; then store+=(--control-socket "$work/control.sock"); fi

# profile NAME PIPELINED ROUND_TRIPS: one callgrind run; prints its total instruction count.
profile() {
    local name=$1 commands=$2 trips=$3
    rm -f "$out/callgrind.$name"
    "$bin/WorkoutdBenchmarks" \
        --baseline "echo=$work/echo-baseline {device}" \
        --subject "workoutd under callgrind=valgrind --tool=callgrind --callgrind-out-file=$out/callgrind.$name $work/workoutd serve --config $work/workoutd.yaml ${store[*]} --device {device}" \
        --commands "$commands" --rounds 1 --round-trips "$trips" --warm-up 1 > /dev/null
    callgrind_annotate "$out/callgrind.$name" 2> /dev/null | swift demangle --simplified > "$out/self.$name.txt"
    callgrind_annotate --inclusive=yes "$out/callgrind.$name" 2> /dev/null | swift demangle --simplified > "$out/inclusive.$name.txt"
    local total
    total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$out/self.$name.txt")
    [ -n "$total" ] || { echo "bench-profile: no profile from the $name run" >&2; return 1; }
    echo "$total"
}

echo "bench-profile: minimal run" >&2
base=$(profile minimal 3 3) || exit 1
echo "bench-profile: $count pipelined commands" >&2
pipelined=$(profile pipelined "$count" 3) || exit 1
echo "bench-profile: $count single-flight round trips" >&2
single=$(profile single-flight 3 "$count") || exit 1

per_pipelined=$(( (pipelined - base) / count ))
per_single=$(( (single - base) / count ))
cat > "$work/profile.md" <<MD
| load (workoutd, callgrind) | instructions per command |
|---|---:|
| pipelined, $count commands | $per_pipelined |
| single-flight, $count round trips | $per_single |

Marginal counts: (total of the run − total of a minimal run) / $count. Command: \`bash Benchmarks/bench-profile.sh $count\`;
the annotated profiles are in \`${out#"$root"/}\`.
MD
cat "$work/profile.md"
echo
echo "hottest functions, single-flight (self):"; sed -n '/^Ir/,$p' "$out/self.single-flight.txt" | head -n 30
bash "$root/Benchmarks/bench-record.sh" pty-profile "workoutd hot path under callgrind" "$work/profile.md"
