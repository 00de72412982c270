#!/usr/bin/env bash
# Exactly what a user does: a socat pty pair, `workoutd --device A`, the seed commands piped in through
# socat on B, replies read back and checked. Prints "N passed, N failed"; exits non-zero on a failure.
#
# Usage: Tests/shell/socat-seeds.sh [path/to/workoutd]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
workoutd=${1:-${WORKOUTD_BINARY:-$repo/.build/debug/workoutd}}
seeds=$repo/../shared/reference/seed-commands.jsonl
work=$(mktemp -d)
passed=0 failed=0
check() { if eval "$2"; then echo "PASS  $1"; passed=$((passed + 1)); else echo "FAIL  $1"; failed=$((failed + 1)); fi; }
cleanup() { kill "$daemon" "$pair" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

if [ ! -f "$seeds" ]; then
    # The project builds and runs without ../shared; the seeds are the protocol's own examples.
    seeds=$work/seeds.jsonl
    cat >"$seeds" <<'SEEDS'
{"command_type": "start_workout", "location": "Gary's Gym", "date": "2020-03-16 19:45:13 +0000", "intensityLevel": 5}
{"command_type": "end_workout"}
{"command_type": "share_workout", "service": "twitter"}
SEEDS
fi

source "$here/pty-daemon.sh"
start_daemon_on_pty_pair

# Send the seeds, then one bad line; keep B open long enough to read every reply.
{ cat "$seeds"; echo '{"command_type":"share_workout","service":"myspace","id":42}'; sleep 2; } \
    | socat -t 3 - "$work/B,raw,echo=0" >"$work/replies.jsonl"

check "four replies for four lines" '[ "$(wc -l <"$work/replies.jsonl")" -eq 4 ]'
check "start_workout acknowledged" 'sed -n 1p "$work/replies.jsonl" | grep -q "\"status\":\"ok\",\"command_type\":\"start_workout\""'
check "end_workout acknowledged" 'sed -n 2p "$work/replies.jsonl" | grep -q "\"status\":\"ok\",\"command_type\":\"end_workout\""'
check "share_workout acknowledged" 'sed -n 3p "$work/replies.jsonl" | grep -q "\"status\":\"ok\",\"command_type\":\"share_workout\""'
check "unknown service rejected with its id and field" 'sed -n 4p "$work/replies.jsonl" | grep -q "\"id\":42,\"error\":{\"code\":\"invalid_field\",\"field\":\"service\""'
check "every reply is one line of JSON" 'python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$work/replies.jsonl"'
check "the workout is stored" '"$workoutd" workouts --state-dir "$work/state" --json | grep -q "Gary'"'"'s Gym"'
kill -TERM "$daemon"; wait "$daemon"; status=$?
check "SIGTERM stops the daemon cleanly (exit 0)" '[ "$status" -eq 0 ]'

if [ "$failed" -gt 0 ]; then
    echo "--- replies"; cat "$work/replies.jsonl"; echo "--- workoutd log"; tail -20 "$work/workoutd.log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
