#!/usr/bin/env bash
# A person at a serial terminal: picocom (inside tmux, a real terminal emulator) on one end of a socat pty
# pair, workoutd on the other. Two commands are typed and Enter pressed (picocom sends a lone CR); each
# reply must appear at the start of its own screen line (no staircase from bare LFs).
#
# Usage: Tests/shell/picocom-session.sh [path/to/workoutd]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
workoutd=${1:-${WORKOUTD_BINARY:-$repo/.build/debug/workoutd}}
work=$(mktemp -d)
session=workoutd-picocom-$$
cleanup() { tmux kill-session -t "$session" 2>/dev/null; kill "$daemon" "$pair" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

source "$here/pty-daemon.sh"
start_daemon_on_pty_pair

tmux new-session -d -s "$session" -x 200 -y 20 "picocom -q -b 115200 $work/B"
sleep 1
tmux send-keys -t "$session" -l '{"id":1,"command_type":"end_workout"}'
tmux send-keys -t "$session" Enter
tmux send-keys -t "$session" -l '{"id":2,"command_type":"end_workout"}'
tmux send-keys -t "$session" Enter
screen=""
for _ in $(seq 100); do
    screen=$(tmux capture-pane -p -t "$session")
    [ "$(grep -c '"no_active_workout"' <<<"$screen")" -ge 2 ] && break
    sleep 0.1
done
echo "$screen" | sed '/^$/d'
if [ "$(grep -c '^{"status":"error","id":[12],' <<<"$screen")" -eq 2 ]; then
    echo "PASS  two typed commands, two replies, each at the start of its own line"
else
    echo "FAIL  replies missing or staircased"
    exit 1
fi
