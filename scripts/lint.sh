#!/usr/bin/env bash
# make lint: swift-format's lint (.swift-format) over every Swift file of the tree but the generated API sources,
# then the comment rules (scripts/lint-comments.py: no issue numbers or measurements in comments, doc comments
# that start with a short summary), then that docs/benchmarks.md is what Benchmarks/bench-doc.py generates.
# Exits non-zero on any finding; `make format` rewrites the Swift files instead (the comment rules are mended by
# hand).
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
python3 scripts/lint-comments.py
# docs/benchmarks.md is generated from Benchmarks/Results and Benchmarks/Thresholds, never edited by hand.
python3 Benchmarks/bench-doc.py --check
