#!/usr/bin/env bash
# `make soak`: a release workoutd against several simulated devices for SOAK_SECONDS (default 600),
# with hostile traffic, unplug/replug cycles and one device that never reads. Writes its figures
# into Benchmarks/Results/soak.md (docs/benchmarks.md is generated from it) and exits non-zero if RSS grows, descriptors leak,
# a reply is missing or malformed, or the daemon dies.
#
#   SOAK_SECONDS=600 SOAK_DEVICES=4 SOAK_REPLUG_PERCENT=2 Benchmarks/soak.sh
# Long mode (SOAK=long, or SOAK_SECONDS of an hour or more): also replication to a real PostgreSQL that is stopped
# six times or every 10 minutes, a reload (SIGHUP) every 5 minutes, samples of threads, database and WAL size and
# reply latency, and the per-hour drift in a section of its own (Benchmarks/Results/soak-long.md):
#   make soak SOAK=long SOAK_SECONDS=7200
# Environment: SOAK_SCRATCH (build directory, default .build-soak), SOAK_CONFIGURATION (release or debug,
# default release), SOAK_REPORT (empty to only print; by default the driver writes its sections to a scratch file,
# taken into Benchmarks/Results and docs/benchmarks.md afterwards, whether the run passed or not).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export SOAK_CONFIGURATION=${SOAK_CONFIGURATION:-release}  # also named in the report
# The soak driver lives in the benchmark package (Benchmarks/Sources/SoakTest), built beside workoutd.
bin=$(BENCH_SCRATCH=${SOAK_SCRATCH:-$root/.build-soak} BENCH_CONFIGURATION=$SOAK_CONFIGURATION \
    bash "$root/Benchmarks/bench-build.sh" workoutd SoakTest)
export WORKOUTD_BINARY="$bin/workoutd"
if [ -n "${SOAK_REPORT+set}" ]; then
    exec "$bin/SoakTest"
fi
report=$(mktemp "${TMPDIR:-/tmp}/workoutd-soak-report.XXXXXX")
trap 'rm -f "$report"' EXIT
status=0
SOAK_REPORT="$report" "$bin/SoakTest" || status=$?
if grep -q '^<!-- bench:' "$report"; then
    python3 "$root/Benchmarks/bench-doc.py" import "$report"
    python3 "$root/Benchmarks/bench-doc.py"
fi
exit "$status"
