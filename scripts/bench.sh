#!/usr/bin/env bash
# `make bench`: runs every benchmark part and records its figures in docs/benchmarks.md.
#
#   bash scripts/bench.sh            every part in scripts/bench.d, in name order
#   bash scripts/bench.sh pty ...    only the named parts
#
# A part is scripts/bench.d/NAME.sh. It builds what it needs in release mode with
# `bash scripts/bench-build.sh PRODUCT...` (the drivers' package Benchmarks/ and workoutd, in "$BENCH_SCRATCH"),
# measures, prints its markdown, and records it
# with `bash scripts/bench-record.sh NAME TITLE FILE` (its own section; other sections stay as they are).
# A part fails only when it could not measure; a missed floor is a figure (MISS), not a failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export BENCH_ROOT=$root
export BENCH_SCRATCH=${BENCH_SCRATCH:-$root/.build-bench}

if [ $# -gt 0 ]; then
    parts=()
    for name in "$@"; do
        [ -f "$root/scripts/bench.d/$name.sh" ] || { echo "bench: no part '$name' (scripts/bench.d/$name.sh)" >&2; exit 64; }
        parts+=("$root/scripts/bench.d/$name.sh")
    done
else
    parts=("$root"/scripts/bench.d/*.sh)
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
