#!/usr/bin/env bash
# make lint: swift-format's lint (.swift-format) over every Swift file of the tree but the generated API sources.
# Exits non-zero on any finding; `make format` rewrites the files instead.
#
# Usage: scripts/lint.sh [format]
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT_FORMAT=${SWIFT_FORMAT:-swift-format}
command -v "$SWIFT_FORMAT" >/dev/null || SWIFT_FORMAT="swift format"
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.swift' | grep -v '/Generated/')
if [[ "${1:-}" == format ]]; then
    $SWIFT_FORMAT format --in-place --parallel "${files[@]}"
    exit 0
fi
$SWIFT_FORMAT lint --strict --parallel "${files[@]}"
echo "lint: ${#files[@]} Swift files, no findings"
