#!/usr/bin/env bash
# Benchmark part `strict-json`: what strict RFC 8259 validation of every line costs, side by side
# with the parser of the commit before it, and that cost as a share of in-memory pipelined throughput.
# Run through `bash Benchmarks/bench.sh strict-json` (after `pty`, whose in-memory figure it relates to).
#
# Both builds of WorkoutProtocol (this commit's, and ebc03e8's: the last without the validator) are compiled with
# Benchmarks/probes/strict-json-decode.swift by `swiftc -O -wmo` and decode the pipelined benchmark's command lines; the two
# binaries alternate for BENCH_STRICT_ROUNDS rounds (default 7) of BENCH_STRICT_SECONDS each (default 2), and the
# medians are compared. The extra nanoseconds per line are set against the time per command of the in-memory
# pipelined figure recorded by the `pty` part (or BENCH_PIPELINED_RATE, commands/s).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
previous=${BENCH_STRICT_PREVIOUS:-ebc03e8}
rounds=${BENCH_STRICT_ROUNDS:-7}
seconds=${BENCH_STRICT_SECONDS:-2}
cd "$root"

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-strict-json.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/previous" "$work/current"
git -C "$root" archive "$previous" Sources/WorkoutProtocol | tar -x -C "$work/previous"
mkdir -p "$work/previous/Sources/StrictJSON"
# The previous commit has no Sources/StrictJSON files: its glob must expand to nothing.
shopt -s nullglob
cp -R "$root/Sources" "$work/current/"
for side in previous current; do
    cp "$root/Benchmarks/probes/strict-json-decode.swift" "$work/$side/main.swift"
    flags=()
    [ "$side" = current ] && flags=(-D STRICT_VALIDATOR)
    # In its own directory: swiftc leaves the module's interface files where it runs.
    # The JSON reader and writer are a module of their own now: compiled into this one, as they were before.
    if [ -d "$work/$side/Sources/StrictJSON" ]; then
        sed -i '/^import StrictJSON$/d' "$work/$side"/Sources/WorkoutProtocol/*.swift "$work/$side"/Sources/StrictJSON/*.swift
    fi
    (cd "$work/$side" && swiftc -O -wmo -swift-version 6 -package-name workoutd -module-name WorkoutProtocol \
        "${flags[@]}" -o decode Sources/StrictJSON/*.swift Sources/WorkoutProtocol/*.swift main.swift)
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: > "$work/previous.txt"
: > "$work/current.txt"
: > "$work/validator.txt"
: > "$work/validator-all.txt"
for _ in $(seq "$rounds"); do
    for side in previous current; do
        read -r decoding validating needed status < <("$work/$side/decode" "$seconds")
        [ "$status" = ok ] || { echo "strict-json: the $side parser refused a benchmark line" >&2; exit 1; }
        echo "$decoding" >> "$work/$side.txt"
        if [ "$side" = current ]; then
            echo "$validating" >> "$work/validator-all.txt"
            echo "$needed" >> "$work/validator.txt"
        fi
    done
done
old=$(median < "$work/previous.txt")
new=$(median < "$work/current.txt")
validator=$(median < "$work/validator.txt")
validator_all=$(median < "$work/validator-all.txt")

rate=${BENCH_PIPELINED_RATE:-$(sed -n 's/^| workoutd, in-memory store | \([0-9]*\) |.*/\1/p' "$root/Benchmarks/Results/pty.md" | head -1)}
[ -n "$rate" ] || { echo "strict-json: no in-memory pipelined figure (run the pty part first, or set BENCH_PIPELINED_RATE)" >&2; exit 1; }

floors=(python3 "$root/Benchmarks/bench_floors.py")
validator_floor=$("${floors[@]}" value strict-json validator_share_of_command)
extra_floor=$("${floors[@]}" value strict-json strict_parser_extra_share_of_command)
PYTHONPATH="$root/Benchmarks" python3 - "$old" "$new" "$validator" "$rate" <<'PY'
import sys
import bench_floors as floors
old, new, validator, rate = (float(v) for v in sys.argv[1:])
per = 1e9 / rate
floors.write_results("strict-json", {
    "validator_share_of_command": validator / per,
    "strict_parser_extra_share_of_command": max(new - old, 0) / per,
})
PY
{
    # The medians go into the rows that set them against a command's time; the rounds behind them are left out.
    awk -v old="$old" -v new="$new" -v validator="$validator" -v rate="$rate" -v previous="$previous" \
        -v validator_floor="$validator_floor" -v extra_floor="$extra_floor" 'BEGIN {
        per = 1e9 / rate; extra = new - old; if (extra < 0) extra = 0
        printf "| ratio | measured | ceiling | result |\n|---|---:|---:|---|\n"
        printf "| validator time (StrictJSONValidator alone on the lines the decoder validates: %s ns per line of the mix) / time per command at %d commands/s (in-memory pipelined) | %.3f | ≤ %s | %s |\n", validator, rate, validator / per, validator_floor, (validator / per <= validator_floor ? "PASS" : "MISS")
        printf "| (strict parser %s − previous parser (%s, no validation) %s ns per line) / time per command | %.3f | ≤ %s | %s |\n", new, previous, old, extra / per, extra_floor, (extra / per <= extra_floor ? "PASS" : "MISS")
    }'
    echo
    echo "The validator alone on every line: $validator_all ns; an all-ASCII flat object skips it (\`FlatJSONObject.isASCII\`, 13 lines in 15)."
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh strict-json\`): the pipelined benchmark's 3000 lines, median CPU ns per line of $rounds"
    echo "alternating rounds of ${seconds} s, both \`swiftc -O -wmo\` (probes/strict-json-decode.swift); the rate: the \`pty\` part's in-memory figure."
} > "$work/section.md"
cat "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" strict-json "Strict JSON validation cost" "$work/section.md"
