#!/usr/bin/env bash
# Builds the libFuzzer target over one device's whole bytes-in, replies-out path and runs it.
#
#   scripts/fuzz.sh [seconds]        default: $FUZZ_SECONDS, else 60
#
# Exits non-zero on any finding (a crash, a broken invariant, a leak, a timeout, memory over the
# limit); the input that caused it is saved under fuzz-out/artifacts/. Starts from the committed
# seeds in Fuzz/corpus (never modified) plus what earlier runs found in fuzz-out/corpus.
# Environment: FUZZ_SCRATCH (build directory, default .build-fuzz), FUZZ_OUT (default fuzz-out),
# FUZZ_CONFIGURATION (release, the default, or debug: slower to run, quicker to build, as in CI).
set -euo pipefail

seconds=${1:-${FUZZ_SECONDS:-60}}
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=${FUZZ_SCRATCH:-$root/.build-fuzz}
out=${FUZZ_OUT:-$root/fuzz-out}
# Optimised, with coverage and AddressSanitizer; lld, because gold crashes on these objects' debug info.
build=(swift build --package-path "$root" --scratch-path "$scratch" -c "${FUZZ_CONFIGURATION:-release}" --product WorkoutdFuzzer
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -use-ld=lld)

"${build[@]}"
fuzzer="$("${build[@]}" --show-bin-path)/WorkoutdFuzzer"
mkdir -p "$out/corpus" "$out/artifacts"
log="$out/last-run.log"

# The first folder receives new inputs, so the committed seeds stay as they are.
# -max_len covers oversized lines (the limit is 4096) several times over; -malloc_limit_mb makes
# any single allocation over 64 MiB a finding, -rss_limit_mb any growth of the process past 1 GiB.
set +e
"$fuzzer" "$out/corpus" "$root/Fuzz/corpus" \
    -max_total_time="$seconds" -max_len=20000 -timeout=10 \
    -rss_limit_mb=1024 -malloc_limit_mb=64 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
echo "fuzz: ${seconds}s, ${runs:-?} runs, ${speed:-?} exec/s, peak RSS ${peak:-?} MB, exit status $status"
if [ "$status" -ne 0 ]; then
    echo "fuzz: FINDING — see $log and $out/artifacts/ (reproduce: $fuzzer <artifact>)" >&2
    exit 1
fi
