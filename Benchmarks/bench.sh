#!/usr/bin/env bash
# `make bench`: runs every benchmark part and records its figures in Benchmarks/Results (docs/benchmarks.md is
# generated from them).
#
#   bash Benchmarks/bench.sh            every part in Benchmarks/parts, in name order
#   bash Benchmarks/bench.sh pty ...    only the named parts
#
# A part is Benchmarks/parts/NAME.sh. It builds what it needs in release mode with
# `bash Benchmarks/bench-build.sh PRODUCT...` (the drivers' package Benchmarks/ and workoutd, in "$BENCH_SCRATCH"),
# measures, prints its markdown, and records it
# with `bash Benchmarks/bench-record.sh NAME TITLE FILE` (its own section; other sections stay as they are).
# A part fails only when it could not measure; a missed floor is a figure (MISS), not a failure: `make bench-check`
# (Benchmarks/bench_floors.py check) fails on one, against the floors in Benchmarks/Thresholds/PART.json.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export BENCH_ROOT=$root
export BENCH_SCRATCH=${BENCH_SCRATCH:-$root/.build-bench}

if [ $# -gt 0 ]; then
    parts=()
    for name in "$@"; do
        [ -f "$root/Benchmarks/parts/$name.sh" ] || { echo "bench: no part '$name' (Benchmarks/parts/$name.sh)" >&2; exit 64; }
        parts+=("$root/Benchmarks/parts/$name.sh")
    done
else
    parts=("$root"/Benchmarks/parts/*.sh)
fi

failed=()
for part in "${parts[@]}"; do
    name=$(basename "$part" .sh)
    echo "== bench: $name"
    if ! bash "$part"; then
        failed+=("$name")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "bench: could not measure: ${failed[*]}" >&2
    exit 1
fi
