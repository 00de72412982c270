# Sourced by the shell tests: a socat pty pair in $work (A for the daemon, B for the test's side) and
# $workoutd serving A. Sets $pair and $daemon (the tests' cleanup kills both); the daemon's log is
# $work/workoutd.log. Returns once the daemon says the device is connected (or after 10 s).
start_daemon_on_pty_pair() {
    socat -d -d pty,raw,echo=0,link="$work/A" pty,raw,echo=0,link="$work/B" 2>"$work/socat.log" &
    pair=$!
    for _ in $(seq 100); do [ -e "$work/A" ] && [ -e "$work/B" ] && break; sleep 0.05; done
    "$workoutd" --device "$work/A" --state-dir "$work/state" --control-socket none "$@" 2>"$work/workoutd.log" &
    daemon=$!
    for _ in $(seq 200); do grep -q "device connected" "$work/workoutd.log" && break; sleep 0.05; done
}
