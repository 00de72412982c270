#!/usr/bin/env bash
# `make check-warnings` (part of `make test`): builds the package in debug with its tests and in release, and fails
# if either build prints a warning. Our own modules are compiled afresh first, since an incremental build does not
# repeat the warnings of files it does not recompile.
#
#   bash scripts/check-warnings.sh
# Environment: SWIFT (default swift), CHECK_WARNINGS_RELEASE_BUILD (the release `swift build` command; the Makefile
# passes the one `make install` uses, so the release build is shared with it), CHECK_WARNINGS_BUILD_FLAGS (added to
# both builds and to `swift package`, e.g. --ignore-lock), CHECK_WARNINGS_CONFIGURATIONS (default "debug release").
#
# Ignored, because they are not ours to fix: warnings printed for files under .build*/checkouts (dependencies'
# sources), swift-distributed-tracing's package-level "found 1 file(s) which are unhandled", and the linker's notes
# on the toolchain's static libraries (lib/swift_static: glibc's "the use of `mktemp' is dangerous" for
# Foundation's own temporary files, in the --static-swift-stdlib release link).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
swift=${SWIFT:-swift}
# shellcheck disable=SC2206  # flag lists
extra=(${CHECK_WARNINGS_BUILD_FLAGS:-})
# shellcheck disable=SC2206
debug=($swift build --build-tests "${extra[@]}")
# shellcheck disable=SC2206
release=(${CHECK_WARNINGS_RELEASE_BUILD:-$swift build -c release --scratch-path $root/.build-release} "${extra[@]}")

# The package's own (non-system) targets: their module folders are what gets rebuilt.
targets=$("$swift" package "${extra[@]}" dump-package | python3 -c '
import json, sys
for target in json.load(sys.stdin)["targets"]:
    if target["type"] in ("regular", "executable", "test"):
        print(target["name"])
')

log=$(mktemp "${TMPDIR:-/tmp}/workoutd-warnings.XXXXXX")
trap 'rm -f "$log"' EXIT
failed=0
check() {
    local name=$1; shift
    local bin
    bin=$("$@" --show-bin-path)
    for target in $targets; do
        rm -rf "${bin:?}/$target.build"
    done
    echo "== check-warnings: $name: $*"
    if ! "$@" > "$log" 2>&1; then
        cat "$log"
        echo "check-warnings: the $name build failed" >&2
        exit 1
    fi
    local found
    found=$(grep 'warning:' "$log" \
        | grep -v -E '/\.build[^/]*/checkouts/' \
        | grep -v -E '/lib/swift_static/' \
        | grep -v -F "'swift-distributed-tracing': found 1 file(s) which are unhandled" \
        | sort -u || true)
    if [ -n "$found" ]; then
        echo "$found"
        echo "check-warnings: the $name build printed $(wc -l <<< "$found") warning(s) from our code (above)" >&2
        failed=1
    else
        echo "check-warnings: $name: no warnings"
    fi
}

for configuration in ${CHECK_WARNINGS_CONFIGURATIONS:-debug release}; do
    case $configuration in
        debug) check debug "${debug[@]}" ;;
        release) check release "${release[@]}" ;;
        *) echo "check-warnings: unknown configuration '$configuration' (debug, release)" >&2; exit 64 ;;
    esac
done
exit "$failed"
