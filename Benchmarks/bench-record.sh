#!/usr/bin/env bash
# Records one benchmark's section in Benchmarks/Results/NAME.md, then regenerates docs/benchmarks.md from
# Benchmarks/Results (Benchmarks/bench-doc.py; the document is generated, never edited by hand):
#
#   bash Benchmarks/bench-record.sh NAME TITLE FILE
#
# FILE holds the section's markdown body (tables, notes). The section becomes
#   ## TITLE
#   BODY
#   Measured DATE on MACHINE (nproc, CPU model), commit HASH.
# replacing the previous one with that NAME. The machine line closes the body's last paragraph (its Command
# note), so no line goes to a blank between it and a table: a table may follow the heading directly.
# A part's figures for its floors are recorded beside it, in Benchmarks/Results/NAME.json (bench_floors.py).
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 NAME TITLE FILE" >&2
    exit 64
fi
name=$1 title=$2 body=$3
root=$(cd "$(dirname "$0")/.." && pwd)
results=${BENCH_RESULTS:-$root/Benchmarks/Results}

case $name in
    *[!a-z0-9-]* | "") echo "$0: NAME must be lower-case letters, digits and dashes; got '$name'" >&2; exit 64 ;;
esac
[ -r "$body" ] || { echo "$0: cannot read $body" >&2; exit 66; }

model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null | head -n 1)" ]; then commit="$commit (with uncommitted changes)"; fi

mkdir -p "$results"
section=$(mktemp)
trap 'rm -f "$section"' EXIT
{
    echo "## $title"
    # Without the body's blank lines at its start and end; a blank line before the machine line after a table (a
    # line after a table's rows is one more row).
    awk 'NF { started = 1 } !started { next } !NF { blanks++; next } { while (blanks) { print ""; blanks-- } print; last = $0 }
         END { if (last ~ /^\|/) print "" }' "$body"
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPUs (${model:-unknown model}), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, commit $commit."
} > "$section"
cat "$section" > "$results/$name.md"
python3 "$root/Benchmarks/bench-doc.py"
echo "bench-record: updated Benchmarks/Results/$name.md and docs/benchmarks.md"
