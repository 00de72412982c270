#!/usr/bin/env bash
# The web page in a real browser: Debian's chromium, headless, driven by chromium-driver through
# Selenium (python3-selenium), against workoutd serving a pty wearable (socat) with its SQLite store.
#
#   bash Tests/web/run.sh [path/to/workoutd]
#
# Screenshots: the page at 1280×900 and 390×844 (web-page.png, web-page-phone.png) and whole pages at both widths,
# all in .build/web-screenshots/ (CI artifacts). WEB_IMAGES=docs/images (make web-screenshots) writes the two
# viewport pictures the README and docs/web.md show there instead, so a test run leaves the tree clean.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
workoutd=${1:-$repo/.build/debug/workoutd}
workoutctl=$(dirname "$workoutd")/workoutctl
python=/usr/bin/python3   # Debian's, which has python3-selenium (not a pyenv or venv one)
for tool in socat chromium chromedriver; do
    command -v "$tool" >/dev/null || { echo "test-web: $tool missing (apt-get install socat chromium chromium-driver python3-selenium)" >&2; exit 1; }
done
"$python" -c "import selenium" 2>/dev/null || { echo "test-web: python3-selenium missing" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-web.XXXXXX")
screenshots=$repo/.build/web-screenshots
images=${WEB_IMAGES:-$screenshots}
case $images in /*) ;; *) images=$repo/$images ;; esac
mkdir -p "$screenshots" "$images"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A daemon with `web:` lines ($2) serving $3 wearables (default 1), each on a pty pair: $name-A<n> served,
# $name-B<n> the wearable's side; sets $port.
start_daemon() {
    local name=$1 web=$2 count=${3:-1} devices=()
    port=
    for n in $(seq "$count"); do
        socat pty,raw,echo=0,link="$work/$name-A$n" pty,raw,echo=0,link="$work/$name-B$n" >/dev/null 2>"$work/$name-socat$n.log" &
        pids+=($!)
        for _ in $(seq 100); do [ -e "$work/$name-A$n" ] && [ -e "$work/$name-B$n" ] && break; sleep 0.05; done
        devices+=(--device "$work/$name-A$n")
    done
    mkdir -m 700 "$work/$name-state"
    printf 'log_level: info\ndiscovery:\n  enabled: false\nweb:\n%b' "$web" > "$work/$name.yaml"
    "$workoutd" --config "$work/$name.yaml" "${devices[@]}" --state-dir "$work/$name-state" \
        --control-socket "$work/$name.sock" >/dev/null 2>"$work/$name.log" &
    pids+=($!)
    for _ in $(seq 400); do
        port=$(sed -n 's/.*web server listening address=[^ ]*:\([0-9]*\) .*/\1/p' "$work/$name.log" | head -n 1)
        [ -n "$port" ] && [ "$(grep -c "device connected" "$work/$name.log")" -ge "$count" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { echo "test-web: $name did not start:" >&2; cat "$work/$name.log" >&2; exit 1; }
}

start_daemon local '  listen: 127.0.0.1:0\n' 2
loopback_port=$port
# Another hub on every address, with a login token: reached by this machine's own non-loopback address when it
# has one (else 127.0.0.1: the rule follows the listen address, so the login is required there too).
token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$token" > "$work/token"
chmod 600 "$work/token"
start_daemon lan "  listen: 0.0.0.0:0\n  token_file: $work/token\n"
network_port=$port
network_host=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | head -n 1 || true)

"$python" "$repo/Tests/web/browser_test.py" \
    --url "http://127.0.0.1:$loopback_port" --wearable "$work/local-B1" --second-wearable "$work/local-B2" \
    --workoutctl "$workoutctl" --socket "$work/local.sock" --serial "$work/local-A1" \
    --network-url "http://${network_host:-127.0.0.1}:$network_port" --network-wearable "$work/lan-B1" --token "$token" \
    --screenshots "$screenshots" --images "$images" || { echo "--- daemon log:"; cat "$work/local.log"; exit 1; }

# The fleet page: a private PostgreSQL on loopback (as `nobody` under root: initdb refuses root), a hub replicating
# into it (its own migration makes the schema), and `workoutd fleet` reading it with a role that may only SELECT.
pgbin=/usr/lib/postgresql/15/bin
pgdir=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-web-pg.XXXXXX")
as_owner=()
if [ "$(id -u)" = 0 ]; then chown nobody "$pgdir"; as_owner=(/usr/sbin/runuser -u nobody --); fi
pgport=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop_cluster() { "${as_owner[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$pgdir"; }
trap 'stop_cluster; cleanup' EXIT
"${as_owner[@]}" "$pgbin/initdb" -D "$pgdir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --no-sync -E UTF8 >/dev/null
"${as_owner[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w -t 60 \
    -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
pg() { "${as_owner[@]}" "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$pgdir" -p "$pgport" -U postgres -At "$@"; }
pg -d postgres -c "CREATE ROLE workoutd LOGIN PASSWORD 'hub-secret'" -c "CREATE ROLE fleet LOGIN PASSWORD 'fleet-secret'"
pg -d postgres -c "CREATE DATABASE gym OWNER workoutd"
printf 'hub-secret\n' > "$work/hub-password"
printf 'fleet-secret\n' > "$work/fleet-password"
chmod 600 "$work/hub-password" "$work/fleet-password"
start_daemon central "  listen: 127.0.0.1:0\nreplication:\n  postgres_url: postgresql://workoutd@127.0.0.1:$pgport/gym?sslmode=disable\n  password_file: $work/hub-password\n  hub_id: web-fleet-hub\n"
for _ in $(seq 300); do
    [ "$(pg -d gym -c "SELECT count(*) FROM pg_tables WHERE tablename = 'workoutd_schema'")" = 1 ] && break
    sleep 0.1
done
pg -d gym -c "GRANT SELECT ON hubs, workouts, shares, workoutd_schema TO fleet"
printf 'fleet:\n  password_file: %s\n' "$work/fleet-password" > "$work/fleet.yaml"
"$workoutd" fleet --postgres-url "postgresql://fleet@127.0.0.1:$pgport/gym?sslmode=disable" --listen 127.0.0.1:0 \
    --config "$work/fleet.yaml" >/dev/null 2>"$work/fleet.log" &
pids+=($!)
fleet_port=
for _ in $(seq 400); do
    fleet_port=$(sed -n 's/.*fleet page listening address=[^ ]*:\([0-9]*\) .*/\1/p' "$work/fleet.log" | head -n 1)
    [ -n "$fleet_port" ] && break
    sleep 0.05
done
[ -n "$fleet_port" ] || { echo "test-web: workoutd fleet did not start:" >&2; cat "$work/fleet.log" >&2; exit 1; }
"$python" "$repo/Tests/web/fleet_test.py" --url "http://127.0.0.1:$fleet_port" --wearable "$work/central-B1" \
    --hub web-fleet-hub --screenshots "$screenshots" \
    || { echo "--- fleet log:"; cat "$work/fleet.log"; echo "--- hub log:"; cat "$work/central.log"; exit 1; }
echo "test-web: passed; screenshots in $screenshots${WEB_IMAGES:+, pictures in $images}"
