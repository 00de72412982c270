#!/usr/bin/env bash
# Builds products for `make bench` / `make soak` in release mode from the benchmark package (Benchmarks/, which
# depends on workoutd by path, so workoutd's own products build there too) and prints the directory of the binaries.
#
#   bin=$(bash Benchmarks/bench-build.sh PRODUCT...)     e.g. workoutd WorkoutdBenchmarks NIOEchoBaseline
# Environment: BENCH_SCRATCH (build directory, default .build-bench), BENCH_CONFIGURATION (release),
# BENCH_BUILD_FLAGS (extra `swift build` flags, e.g. --ignore-lock). Build output goes to stderr.
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
scratch=${BENCH_SCRATCH:-$root/.build-bench}
# The drivers build against the dependency versions the daemon resolved, when it has resolved them.
if [ -f "$root/Package.resolved" ] && ! [ -f "$root/Benchmarks/Package.resolved" ]; then
    cp "$root/Package.resolved" "$root/Benchmarks/Package.resolved"
fi
# shellcheck disable=SC2206  # BENCH_BUILD_FLAGS is a list of flags
build=(swift build --package-path "$root/Benchmarks" --scratch-path "$scratch" -c "${BENCH_CONFIGURATION:-release}" ${BENCH_BUILD_FLAGS:-})
for product in "$@"; do
    "${build[@]}" --product "$product" >&2
done
"${build[@]}" --show-bin-path
