#!/usr/bin/env bash
# Records one benchmark's figures in docs/benchmarks.md, between its own markers, leaving every other
# benchmark's section as it is:
#
#   bash Benchmarks/bench-record.sh NAME TITLE FILE
#
# FILE holds the section's markdown body (tables, notes). The section becomes
#   <!-- bench:NAME:start -->
#   ## TITLE
#   BODY
#   Measured DATE on MACHINE (nproc, CPU model), commit HASH.
#   <!-- bench:NAME:end -->
# replacing the previous one with that NAME, or appended when there is none yet. The machine line closes the
# body's last paragraph (its Command note), so no line goes to a blank between it and a table: a table may follow
# the heading directly.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 NAME TITLE FILE" >&2
    exit 64
fi
name=$1 title=$2 body=$3
root=$(cd "$(dirname "$0")/.." && pwd)
doc=${BENCH_DOC:-$root/docs/benchmarks.md}

case $name in
    *[!a-z0-9-]* | "") echo "$0: NAME must be lower-case letters, digits and dashes; got '$name'" >&2; exit 64 ;;
esac
[ -r "$body" ] || { echo "$0: cannot read $body" >&2; exit 66; }

model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain 2>/dev/null | head -n 1)" ]; then commit="$commit (with uncommitted changes)"; fi

section=$(mktemp)
trap 'rm -f "$section" "$section.doc"' EXIT
{
    echo "<!-- bench:$name:start -->"
    echo "## $title"
    # Without the body's blank lines at its start and end; a blank line before the machine line after a table (a
    # line after a table's rows is one more row).
    awk 'NF { started = 1 } !started { next } !NF { blanks++; next } { while (blanks) { print ""; blanks-- } print; last = $0 }
         END { if (last ~ /^\|/) print "" }' "$body"
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) CPUs (${model:-unknown model}), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, commit $commit."
    # The end marker may follow the machine line directly: an HTML comment ends a paragraph.
    echo "<!-- bench:$name:end -->"
} > "$section"

mkdir -p "$(dirname "$doc")"
if [ ! -e "$doc" ]; then
    cat > "$doc" <<'HEADER'
# Benchmarks

Figures recorded by `make bench` (release builds). Each section is rewritten only by its own runner, between
its `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->` markers (`Benchmarks/bench-record.sh`); edit
outside the markers freely.
HEADER
fi

start="<!-- bench:$name:start -->" end="<!-- bench:$name:end -->"
if grep -qxF "$start" "$doc"; then
    grep -qxF "$end" "$doc" || { echo "$0: $doc has '$start' but no '$end'; fix it by hand" >&2; exit 65; }
    # Replace from the start marker through the end marker with the new section.
    awk -v start="$start" -v end="$end" -v section="$section" '
        $0 == start { while ((getline line < section) > 0) print line; skipping = 1; next }
        skipping && $0 == end { skipping = 0; next }
        !skipping { print }
    ' "$doc" > "$section.doc"
    cat "$section.doc" > "$doc"
else
    { echo; cat "$section"; } >> "$doc"
fi
echo "bench-record: updated section '$name' in ${doc#"$root"/}"
