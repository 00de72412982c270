#!/usr/bin/env bash
# The real-systemd test: workoutd installed with `make install DESTDIR=...` into a Debian
# bookworm root, booted under systemd-nspawn, a pty bound in as the wearable, then driven with
# systemctl and journalctl exactly as a user would.
#
# Usage (as root): Tests/systemd/run.sh
# Needs: systemd-container, debootstrap, python3, make, util-linux (nsenter), the Swift toolchain.
# Environment: WORKOUTD_NSPAWN_ROOT  cached root (default /var/tmp/workoutd-nspawn-root)
#              RELEASE_SCRATCH       release build directory (default .build-release in the repository)
#              KEEP_WORKDIR=1        keep the overlay and logs for inspection
#              WORKOUTD_CONFIG       the default configuration to install (default Config/workoutd.yaml)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
unit=workoutd
device=/dev/ttyWEARABLE0
default_config=${WORKOUTD_CONFIG:-$repo/Config/workoutd.yaml}

passed=0
failed=0
pass() { printf 'PASS  %s\n' "$*"; passed=$((passed + 1)); }
fail() { printf 'FAIL  %s\n' "$*"; failed=$((failed + 1)); }
info() { printf '      %s\n' "$*"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds_since() { local ms=$(($(now_ms) - $1)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }

work=""
merged=""
nspawn_pid=""
init_pid=""
wearable_pid=""

cleanup() {
    if [[ -n "$init_pid" ]] && kill -0 "$init_pid" 2>/dev/null; then
        nsenter -t "$init_pid" -a systemctl poweroff --no-block >/dev/null 2>&1
    fi
    if [[ -n "$nspawn_pid" ]]; then
        for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$nspawn_pid" 2>/dev/null && kill -KILL "$nspawn_pid" 2>/dev/null
        wait "$nspawn_pid" 2>/dev/null
    fi
    if [[ -n "$wearable_pid" ]]; then
        kill "$wearable_pid" 2>/dev/null
        wait "$wearable_pid" 2>/dev/null
    fi
    if [[ -n "$merged" ]] && mountpoint -q "$merged"; then
        umount "$merged"
    fi
    if [[ -n "$work" ]]; then
        if [[ "${KEEP_WORKDIR:-0}" == 1 ]]; then
            echo "work directory kept: $work"
        else
            rm -rf --one-file-system "$work"
        fi
    fi
}

finish() {
    cleanup
    echo "$passed passed, $failed failed"
    ((failed == 0))
    exit
}

abort() {
    fail "$*"
    finish
}
trap 'abort "interrupted"' INT TERM

in_container() { nsenter -t "$init_pid" -a "$@"; }
unit_property() { in_container systemctl show "$unit" --property="$1" --value; }

# --- Prerequisites and the cached root ---------------------------------------------------------------
[[ $EUID -eq 0 ]] || abort "must run as root (systemd-nspawn, mounts)"
for tool in systemd-nspawn nsenter python3 make mountpoint; do
    command -v "$tool" >/dev/null || abort "$tool is missing (apt-get install -y systemd-container util-linux python3 make)"
done
root=$("$repo/scripts/nspawn-root.sh") || abort "no bookworm root (scripts/nspawn-root.sh failed)"

# The cached root stays pristine: each run installs into an overlay on top of it.
work=$(mktemp -d /var/tmp/workoutd-systemd-test.XXXXXX)
merged="$work/root"
mkdir -p "$work/upper" "$work/overlay-work" "$merged"
mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/overlay-work" "$merged" \
    || abort "cannot mount an overlay on $root"

# --- make install ------------------------------------------------------------------------------------
install_log="$work/install.log"
make_target() { make -C "$repo" -f mk/install.mk "$1" DESTDIR="$merged" PREFIX=/usr/local WORKOUTD_CONFIG="$default_config" >>"$install_log" 2>&1; }
install_into_root() { make_target install; }
started=$(now_ms)
if install_into_root; then
    pass "make install DESTDIR=<root> ($(seconds_since "$started") s, includes the release build)"
else
    tail -20 "$install_log"
    abort "make install DESTDIR=<root> failed (log above)"
fi
binary="$merged/usr/local/bin/workoutd"
if ldd "$binary" | grep -qE 'libswift|libFoundation|libdispatch'; then
    fail "the installed binary links the Swift runtime dynamically: $(ldd "$binary" | grep -E 'libswift|libFoundation' | head -3)"
else
    pass "the installed binary has the Swift runtime linked in (needs only: $(ldd "$binary" | awk '{print $1}' | grep -v '^/' | tr '\n' ' '))"
fi
if cmp -s "$default_config" "$merged/etc/workoutd/workoutd.yaml"; then
    pass "make install put the default configuration in /etc/workoutd/workoutd.yaml"
else
    fail "make install did not install $default_config as /etc/workoutd/workoutd.yaml"
fi
rules=$(cd "$merged/usr/local/lib/udev/rules.d" 2>/dev/null && ls -- *.rules 2>/dev/null | tr '\n' ' ')
if [[ -n "$rules" && -f "$merged/usr/local/lib/systemd/system/workoutd.service" ]]; then
    pass "make install put the unit and the udev rule ($rules) in place"
else
    fail "unit or udev rule missing after make install"
fi

installed_extras=(usr/local/bin/workoutctl usr/local/share/man/man8/workoutd.8 usr/local/share/man/man1/workoutctl.1
    usr/local/share/man/man5/workoutd.yaml.5
    usr/local/share/bash-completion/completions/workoutd usr/local/share/bash-completion/completions/workoutctl
    usr/local/lib/modules-load.d/workoutd.conf)
missing_extras=$(for file in "${installed_extras[@]}"; do [[ -s "$merged/$file" ]] || echo "/$file"; done)
if [[ -z "$missing_extras" ]] && "$merged/usr/local/bin/workoutctl" --help >/dev/null \
    && grep -q '^cdc_acm$' "$merged/usr/local/lib/modules-load.d/workoutd.conf"; then
    pass "make install put workoutctl, the three man pages, both bash completions and modules-load.d/workoutd.conf in place"
else
    fail "make install is missing: $(tr '\n' ' ' <<<"$missing_extras")"
fi

# The administrator's configuration: serve the bound pty, log at debug so priorities 7 and 6 both occur.
cat >"$merged/etc/workoutd/workoutd.yaml" <<EOF
# Edited for the systemd test: serve the wearable bound into the container.
devices:
  - $device
log_level: debug
EOF
cp "$merged/etc/workoutd/workoutd.yaml" "$work/edited.yaml"
install_into_root || abort "second make install failed"
if cmp -s "$work/edited.yaml" "$merged/etc/workoutd/workoutd.yaml"; then
    pass "a second make install kept the edited configuration"
else
    fail "a second make install overwrote the edited configuration"
fi

# What this configuration needs beyond the unit's ttyACM/ttyUSB: the pty's device node.
mkdir -p "$merged/etc/systemd/system/$unit.service.d"
cat >"$merged/etc/systemd/system/$unit.service.d/test-device.conf" <<EOF
[Service]
DeviceAllow=$device rw
EOF

# --- The wearable and the container -----------------------------------------------------------------
# make install created the static groups (sysusers.d) in the root: the wearable's and the control socket's.
wearable_gid=$(awk -F: '$1 == "workoutd-wearable" { print $3 }' "$merged/etc/group")
readers_gid=$(awk -F: '$1 == "workoutd" { print $3 }' "$merged/etc/group")
if [[ -n "$wearable_gid" && -n "$readers_gid" ]]; then
    pass "make install created the groups workoutd-wearable ($wearable_gid) and workoutd ($readers_gid) with systemd-sysusers"
else
    abort "no workoutd-wearable or workoutd group in the root after make install"
fi
coproc WEARABLE { exec python3 "$here/pty_wearable.py" --group "$wearable_gid"; }
wearable_pid=$WEARABLE_PID
read -r -t 10 -u "${WEARABLE[0]}" pty_node || abort "the pty wearable did not start"
info "wearable: $pty_node bound in as $device (group workoutd-wearable, mode 0660)"

# Sends a command line and waits for the reply carrying its id; resends (same id, so the daemon
# answers from its replay cache instead of running it twice) while the daemon is (re)connecting.
reply=""
send_command() {
    local id=$1 line=$2 timeout=${3:-15} deadline attempt_until
    deadline=$(($(now_ms) + timeout * 1000))
    while (($(now_ms) < deadline)); do
        printf '%s\n' "$line" >&"${WEARABLE[1]}"
        attempt_until=$(($(now_ms) + 2000))
        while (($(now_ms) < attempt_until)); do
            if read -r -t 0.5 -u "${WEARABLE[0]}" reply; then
                [[ "$reply" == *"\"id\":$id"[,}]* ]] && return 0
                info "unrelated line from the daemon: $reply"
            fi
        done
    done
    reply=""
    return 1
}

started=$(now_ms)
systemd-nspawn -D "$merged" --boot --register=no --keep-unit --console=passive \
    --bind="$pty_node:$device" >"$work/nspawn.log" 2>&1 </dev/null &
nspawn_pid=$!
for _ in $(seq 100); do
    init_pid=$(pgrep -P "$nspawn_pid" -x systemd | head -n 1)
    [[ -n "$init_pid" ]] && break
    sleep 0.1
done
[[ -n "$init_pid" ]] || { cat "$work/nspawn.log"; abort "the container's systemd did not start"; }
# Until systemd has its private bus socket, systemctl cannot even ask (it prints nothing, or "offline"
# when the socket is not there yet); then --wait waits for boot to end.
state=""
for _ in $(seq 300); do
    state=$(timeout 60 nsenter -t "$init_pid" -a systemctl is-system-running --wait 2>/dev/null)
    [[ -n "$state" && "$state" != offline ]] && break
    sleep 0.2
done
boot_seconds=$(seconds_since "$started")
if [[ "$state" == running ]]; then
    pass "container booted to 'running' in $boot_seconds s"
else
    fail "container booted to '$state' in $boot_seconds s: $(in_container systemctl --failed --plain --no-legend | tr '\n' ';')"
fi

verify_output=$(in_container systemd-analyze verify "$unit.service" 2>&1)
if [[ -z "$verify_output" ]]; then
    pass "systemd-analyze verify $unit.service is clean inside the container"
else
    fail "systemd-analyze verify: $verify_output"
fi
score=$(in_container systemd-analyze security "$unit.service" --no-pager 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if [[ -n "$score" ]] && awk -v s="$score" 'BEGIN { exit !(s <= 1.5) }'; then
    pass "systemd-analyze security $unit.service (the installed unit, online): $score"
else
    fail "systemd-analyze security score '$score' (want 1.5 or lower)"
fi

# --- systemctl start: returns after READY ------------------------------------------------------------
started=$(now_ms)
if in_container systemctl start "$unit"; then
    start_seconds=$(seconds_since "$started")
    status_text=$(unit_property StatusText)
    if [[ -n "$status_text" ]]; then
        pass "systemctl start returned after READY=1 in $start_seconds s (status already '$status_text')"
    else
        fail "systemctl start returned but the daemon sent no STATUS with READY"
    fi
    exec_start=$(unit_property ExecMainStartTimestampMonotonic)
    active_enter=$(unit_property ActiveEnterTimestampMonotonic)
    info "exec to READY (systemd's timestamps): $(((active_enter - exec_start) / 1000)) ms"
else
    fail "systemctl start $unit failed: $(in_container journalctl -u "$unit" --no-pager -n 20 | tr '\n' '|')"
fi
active=$(in_container systemctl is-active "$unit")
[[ "$active" == active ]] && pass "systemctl is-active: active" || fail "systemctl is-active: $active"
[[ "$(unit_property Type)" == notify ]] && pass "the unit runs as Type=notify" || fail "Type is $(unit_property Type)"

# --- Least privilege, as the kernel sees it -----------------------------------------------------------
main_pid=$(unit_property MainPID)
proc_status=$(in_container cat "/proc/$main_pid/status" 2>/dev/null)
uid=$(awk '/^Uid:/ { print $2 }' <<<"$proc_status")
groups=$(awk '/^Groups:/ { $1 = ""; print }' <<<"$proc_status")
if ((uid >= 61184 && uid <= 65519)) && [[ " $groups " == *" $wearable_gid "* && " $groups " == *" $readers_gid "* ]] \
    && grep -q '^CapEff:[[:space:]]*0000000000000000$' <<<"$proc_status" \
    && grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$proc_status" \
    && grep -q '^Seccomp:[[:space:]]*2$' <<<"$proc_status"; then
    pass "the daemon runs as dynamic uid $uid with the groups workoutd-wearable and workoutd, no capabilities, NoNewPrivs, seccomp"
else
    fail "privileges: uid=$uid groups=$groups $(grep -E '^(CapEff|NoNewPrivs|Seccomp):' <<<"$proc_status" | tr '\n\t' '  ')"
fi

# --- The control socket: group workoutd may connect, SO_PEERCRED decides what it may do -------------------
socket_owner=$(in_container stat -c '%G %a' /run/workoutd/control.sock 2>&1)
reader_status=$(in_container setpriv --reuid=nobody --regid=workoutd --clear-groups /usr/local/bin/workoutctl status 2>&1)
reader_send=$(in_container setpriv --reuid=nobody --regid=workoutd --clear-groups /usr/local/bin/workoutctl send --device "$device" '{"command_type":"end_workout"}' 2>&1)
stranger=$(in_container setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/local/bin/workoutctl status 2>&1)
if [[ "$socket_owner" == "workoutd 660" && "$reader_status" == *version* && "$reader_send" == *"permission denied: send needs"* \
    && "$stranger" == *"ermission denied"* ]]; then
    pass "control socket group workoutd, 0660: a workoutd member may read but not send, others cannot connect"
else
    fail "control socket: owner/mode '$socket_owner'; reader status: $reader_status; reader send: $reader_send; stranger: $stranger"
fi

# --- A seed command on the pty, and the status line ----------------------------------------------------
if send_command 101 '{"command_type":"start_workout","id":101,"location":"Gary'"'"'s Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}'; then
    [[ "$reply" == *'"status":"ok"'* ]] && pass "start_workout on the pty acked: $reply" || fail "start_workout answered: $reply"
else
    fail "no reply to start_workout on $device"
fi
status_line=""
for _ in $(seq 30); do
    status_line=$(in_container systemctl status "$unit" --no-pager 2>/dev/null | sed -n 's/^[[:space:]]*Status: "\(.*\)"$/\1/p')
    [[ "$status_line" == *"1 workout active"* ]] && break
    sleep 0.2
done
if [[ "$status_line" == *"1 workout active"* ]]; then
    pass "systemctl status shows Status: \"$status_line\""
else
    fail "systemctl status shows Status: \"$status_line\" (expected it to count the active workout)"
fi

# --- Reload: SIGHUP applies a good configuration and rejects a bad one, without a restart ----------
if in_container systemctl reload "$unit" && sleep 0.5 && [[ "$(unit_property MainPID)" == "$main_pid" ]] \
    && [[ "$(in_container systemctl is-active "$unit")" == active ]]; then
    pass "systemctl reload (SIGHUP) leaves the daemon running (same MainPID)"
else
    fail "systemctl reload disturbed the daemon: MainPID $(unit_property MainPID), $(in_container systemctl is-active "$unit")"
fi
# An administrator's typo: the reload must be refused, logged as an error, and the daemon keep running.
sed -i 's/^log_level: debug$/log_level: loud/' "$merged/etc/workoutd/workoutd.yaml"
# ExecReload runs `workoutd check-config` before signalling, so systemctl reload itself fails.
if in_container systemctl reload "$unit"; then reload_refused=no; else reload_refused=yes; fi
sleep 0.5
cp "$work/edited.yaml" "$merged/etc/workoutd/workoutd.yaml"
if [[ "$reload_refused" == yes && "$(unit_property MainPID)" == "$main_pid" \
    && "$(in_container systemctl is-active "$unit")" == active ]]; then
    pass "a reload with an invalid configuration is refused (systemctl reload fails) and the daemon keeps running"
else
    fail "a reload with an invalid configuration: refused=$reload_refused, MainPID $(unit_property MainPID), $(in_container systemctl is-active "$unit")"
fi

# --- Priorities: the unit's system call filter lets the daemon lower its own -------------------------------
# Share delivery runs on a thread of its own at SCHED_IDLE (policy 5 in /proc/<pid>/task/<tid>/stat,
# field 41); libdispatch lowers its worker threads with setpriority. Both were refused by
# SystemCallFilter=~@resources until the unit allowed setpriority/sched_setscheduler/sched_setattr again.
# The share worker's thread exists from start (ShareDeliveryService runs on it); the workout stays active
# for the restart check below.
idle_threads=$(in_container sh -c "cat /proc/$main_pid/task/*/stat" 2>/dev/null \
    | python3 -c 'import sys; print(sum(line.rsplit(")", 1)[1].split()[38] == "5" for line in sys.stdin))')
# errno=1 (EPERM) is the system call filter refusing; errno=13 (EACCES) is libdispatch asking to *raise* a
# worker's priority for its QoS class, which an unprivileged service may not do, by design.
priority_lines=$(in_container journalctl -u "$unit" --no-pager -o cat | grep "Failed to set thread priority")
filtered=$(grep -c 'errno=1$' <<<"$priority_lines")
if ((idle_threads >= 1)) && ((filtered == 0)); then
    pass "share delivery runs on a SCHED_IDLE thread ($idle_threads); no thread priority refused by the filter ($(grep -c . <<<"$priority_lines") raise attempts refused with EACCES)"
else
    fail "SCHED_IDLE threads: $idle_threads; refused by the system call filter: $(tr '\n' '|' <<<"$priority_lines")"
fi

# --- The journal: priorities from the <N> prefixes ------------------------------------------------------
daemon_journal() { in_container journalctl -u "$unit" --no-pager _PID="$main_pid" "$@"; }
priority_counts=$(daemon_journal -o json | python3 -c '
import json, sys, collections
counts = collections.Counter(json.loads(line).get("PRIORITY") for line in sys.stdin if line.strip())
print(" ".join(f"{p}:{n}" for p, n in sorted(counts.items())))')
info "the daemon's journal lines by priority: $priority_counts"
daemon_lines=$(daemon_journal -o cat | wc -l)
raw_prefix=$(daemon_journal -o cat | grep -c '^<[0-7]>')
debug_only=$(daemon_journal -p debug..debug -o cat | wc -l)
info_and_up=$(daemon_journal -p info -o cat)
warning_and_up=$(daemon_journal -p warning -o cat)
if ((daemon_lines > 0 && raw_prefix == 0)); then
    pass "journald parsed the <N> prefix of all $daemon_lines daemon lines (none left in the messages)"
else
    fail "$daemon_lines daemon lines in the journal, $raw_prefix still start with a raw <N> prefix"
fi
# The rejected reload is reported by ExecReload's check-config, a process of the unit but not the daemon.
unit_errors=$(in_container journalctl -u "$unit" --no-pager -p err -o cat)
if ((debug_only > 0)) && grep -q '^ready ' <<<"$info_and_up" && ! grep -q '^ready ' <<<"$warning_and_up" \
    && ! grep -q 'configuration reloaded' <<<"$warning_and_up" \
    && grep -q "configuration key 'log_level'" <<<"$unit_errors"; then
    pass "journalctl -p: $debug_only debug-only lines hidden at -p info; -p err shows the rejected reload's key, -p warning no info lines"
else
    fail "journalctl -p filtering: debug-only=$debug_only; daemon at -p warning: $(tr '\n' '|' <<<"$warning_and_up"); unit at -p err: $(tr '\n' '|' <<<"$unit_errors")"
fi

# --- SIGKILL: systemd restarts it and the workout survives ---------------------------------------------
restarts_before=$(unit_property NRestarts)
in_container systemctl kill -s KILL "$unit"
started=$(now_ms)
new_pid=""
for _ in $(seq 100); do
    sleep 0.1
    candidate=$(unit_property MainPID)
    if [[ "$candidate" != 0 && "$candidate" != "$main_pid" && "$(in_container systemctl is-active "$unit")" == active ]]; then
        new_pid=$candidate
        break
    fi
done
if [[ -n "$new_pid" ]]; then
    pass "after SIGKILL systemd restarted it (pid $main_pid -> $new_pid, NRestarts $restarts_before -> $(unit_property NRestarts)) in $(seconds_since "$started") s"
else
    fail "after SIGKILL the daemon was not restarted: $(in_container systemctl is-active "$unit")"
fi
if send_command 102 '{"command_type":"end_workout","id":102}'; then
    if [[ "$reply" == *'"status":"ok"'* ]]; then
        pass "the workout started before the kill was still active: end_workout acked: $reply"
    elif [[ "$reply" == *no_active_workout* ]]; then
        fail "the active workout did not survive the restart (durable storage, issue 4, not wired?): $reply"
    else
        fail "end_workout after the restart answered: $reply"
    fi
else
    fail "no reply to end_workout after the restart; the restarted daemon logged:"
    in_container journalctl -u "$unit" --no-pager -o cat _PID="$new_pid" | grep -v "matches no rule" | tail -n 15 | sed 's/^/      | /'
fi

# --- systemctl stop: clean and quick --------------------------------------------------------------------
main_pid=$(unit_property MainPID)
started=$(now_ms)
in_container systemctl stop "$unit"
stop_seconds=$(seconds_since "$started")
result=$(unit_property Result)
state=$(in_container systemctl is-active "$unit")
if ((main_pid > 0)) && [[ "$state" == inactive && "$result" == success ]] && awk -v s="$stop_seconds" 'BEGIN { exit !(s < 5) }'; then
    pass "systemctl stop: inactive, result success, in $stop_seconds s"
else
    fail "systemctl stop (main pid $main_pid): state $state, result $result, took $stop_seconds s"
fi
logged_stop=no
# journald takes stream lines asynchronously; on a loaded CI machine once not within 2 s of the stop, so up to 10 s.
for _ in $(seq 100); do
    in_container journalctl -u "$unit" -o cat --no-pager _PID="$main_pid" | grep -q '^stopping' && logged_stop=yes && break
    sleep 0.1
done
if [[ $logged_stop == yes ]]; then
    pass "the daemon logged its shutdown"
else
    fail "no shutdown line from the daemon in the journal"
fi

# --- make uninstall -------------------------------------------------------------------------------------
if make_target uninstall \
    && [[ ! -e "$merged/usr/local/bin/workoutd" && ! -e "$merged/usr/local/lib/systemd/system/workoutd.service" ]] \
    && [[ ! -e "$merged/usr/local/bin/workoutctl" && ! -e "$merged/usr/local/share/man/man8/workoutd.8" ]] \
    && [[ ! -e "$merged/usr/local/share/man/man5/workoutd.yaml.5" ]] \
    && [[ ! -e "$merged/usr/local/lib/modules-load.d/workoutd.conf" ]] \
    && ! ls "$merged/usr/local/lib/udev/rules.d/"*.rules >/dev/null 2>&1 \
    && cmp -s "$work/edited.yaml" "$merged/etc/workoutd/workoutd.yaml"; then
    pass "make uninstall removed the binaries, man pages, unit, rule and modules-load.d entry, and kept the edited configuration"
else
    fail "make uninstall left files behind or removed the edited configuration"
fi

info "timings: boot $boot_seconds s, systemctl start ${start_seconds:-?} s, systemctl stop $stop_seconds s"
finish
