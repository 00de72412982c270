#!/usr/bin/env bash
# The demo: a simulated wearable on a socat pty pair, workoutd serving one end, the seed commands
# sent on the other, every line and its reply shown, then how to run workoutd and workoutctl (built beside each
# other). Usage: scripts/demo.sh path/to/workoutd
set -euo pipefail
workoutd=$1
bin=$(cd "$(dirname "$workoutd")" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
seeds=$repo/../shared/reference/seed-commands.jsonl
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
if [ ! -f "$seeds" ]; then
    seeds=$work/seeds.jsonl
    printf '%s\n' \
        '{"command_type": "start_workout", "location": "Gary'"'"'s Gym", "date": "2020-03-16 19:45:13 +0000", "intensityLevel": 5}' \
        '{"command_type": "end_workout"}' \
        '{"command_type": "share_workout", "service": "twitter"}' >"$seeds"
fi
{ cat "$seeds"; echo '{"command_type":"end_workout","id":"again"}'; echo 'not json'; } >"$work/commands.jsonl"

socat pty,raw,echo=0,link="$work/wearable-device" pty,raw,echo=0,link="$work/wearable" 2>/dev/null &
for _ in $(seq 100); do [ -e "$work/wearable" ] && break; sleep 0.05; done
WORKOUTD_WEB_LISTEN=off "$workoutd" --device "$work/wearable-device" --state-dir "$work/state" \
    --control-socket "$work/control.sock" --log-level info 2>"$work/log" &
for _ in $(seq 200); do grep -q "device connected" "$work/log" && break; sleep 0.05; done

echo "== workoutd is serving $work/wearable-device; the simulated wearable sends on $work/wearable"
{ cat "$work/commands.jsonl"; sleep 1.5; } | socat -t 2 - "$work/wearable,raw,echo=0" >"$work/replies.jsonl"
paste -d '\n' "$work/commands.jsonl" "$work/replies.jsonl" | awk 'NR % 2 == 1 { print "-> " $0; next } { print "<- " $0 "\n" }'
echo "== stored workouts (workoutd workouts --state-dir ...)"
"$workoutd" workouts --state-dir "$work/state"
echo "== the wearable as workoutctl sees it (workoutctl --socket ... devices)"
"$bin/workoutctl" --socket "$work/control.sock" devices
echo "== daemon log"
cat "$work/log"
cat <<EOF

== workoutd and workoutctl are in $bin ($("$workoutd" --version)):
   export PATH=$bin:\$PATH
   workoutd --help; workoutctl --help; workoutd --version
   README.md "For developers" runs the daemon by hand, without root, the way the demo did.
EOF
