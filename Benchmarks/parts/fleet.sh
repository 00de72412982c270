#!/usr/bin/env bash
# Benchmark part `fleet`: a chain's hubs replicating into one central PostgreSQL through PgBouncer in transaction
# pooling mode, on this machine. Each simulated hub is the daemon's own store, engine and replication shipper
# (Benchmarks/Sources/FleetBenchmark), with its own hub id and heartbeat, at a gym's rates: a workout every few
# minutes per hub, and classes that start a tenth of the hubs at once.
#   - fleet sizes BENCH_FLEET_STEPS (default 1000,2000,3000), each adding hubs to the running ones, until the lag p99
#     passes 5 s: server connections, lag p50/p99, central rows/s and CPU, heartbeat writes, the largest fleet held;
#   - then a failover under the load of BENCH_FLEET_FAILOVER_HUBS (default 1000) hubs: a streaming standby
#     (pg_basebackup -R, synchronous), a second pooler in front of it, the hubs given both poolers
#     (target_session_attrs=read-write); the primary is stopped (immediate) and the standby promoted: time to resume,
#     workouts lost and duplicated.
# Run through `bash Benchmarks/bench.sh fleet`; needs Debian's `postgresql` and `pgbouncer` packages.
#
# Environment: BENCH_FLEET_STEPS, BENCH_FLEET_SECONDS (60 per size), BENCH_FLEET_WORKOUT_INTERVAL (180 s mean per
# hub), BENCH_FLEET_HEARTBEAT (30 s), BENCH_FLEET_FAILOVER_HUBS (1000; 0 skips the failover).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/initdb" ] || { echo "fleet: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
command -v pgbouncer > /dev/null || [ -x /usr/sbin/pgbouncer ] || {
    echo "fleet: PgBouncer is not installed (apt-get install pgbouncer)" >&2
    exit 1
}
pgbouncer=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)

bin=$(bash "$root/Benchmarks/bench-build.sh" FleetBenchmark)

# A thousand hubs hold a few thousand files and sockets open: as many as this machine lets a process.
ulimit -n "$(ulimit -Hn)"

# Server, poolers and their sockets in directories of their own; initdb and pgbouncer refuse root, so as root they
# belong to nobody.
work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-fleet.XXXXXX")
chmod 755 "$work"
as=()
if [ "$(id -u)" -eq 0 ]; then as=(runuser -u nobody --); fi
servers=()
poolers=()
cleanup() {
    for pid in "${poolers[@]}"; do kill "$pid" 2> /dev/null || true; done
    for pidfile in "$work"/*/pgbouncer.pid; do [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2> /dev/null || true; done
    for data in "${servers[@]}"; do "${as[@]}" "$pgbin/pg_ctl" -D "$data" -w -t 60 -m immediate stop > /dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_server NAME PORT [EXTRA-OPTIONS]: a cluster whose only way in is its unix socket in $work/NAME.
start_server() {
    local name=$1 port=$2 options=${3:-}
    mkdir -p "$work/$name"
    [ ${#as[@]} -eq 0 ] || chown nobody "$work/$name"
    servers+=("$work/$name/data")
    "${as[@]}" "$pgbin/pg_ctl" -D "$work/$name/data" -l "$work/$name/server.log" -w -t 120 \
        -o "-k $work/$name -p $port -c listen_addresses= -c max_connections=200 $options" start > /dev/null
}

# start_pooler NAME SERVER-DIRECTORY SERVER-PORT: PgBouncer on a loopback port, transaction pooling; sets $port.
start_pooler() {
    local name=$1 server=$2 server_port=$3
    port=$(free_port)
    mkdir -p "$work/$name"
    printf '"workoutd" ""\n' > "$work/$name/userlist.txt"
    cat > "$work/$name/pgbouncer.ini" <<INI
[databases]
gym = host=$server port=$server_port dbname=gym
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $work/$name/userlist.txt
pool_mode = transaction
max_client_conn = 20000
default_pool_size = 20
server_login_retry = 1
ignore_startup_parameters = extra_float_digits
logfile = $work/$name/pgbouncer.log
pidfile = $work/$name/pgbouncer.pid
INI
    [ ${#as[@]} -eq 0 ] || chown -R nobody "$work/$name"
    # A client is a file to the pooler: it gets this script's limit (runuser would reset it to the login default).
    "${as[@]}" sh -c "ulimit -n $(ulimit -n) && exec $pgbouncer $work/$name/pgbouncer.ini" > /dev/null 2>&1 &
    poolers+=($!)
    for _ in $(seq 100); do
        (echo > "/dev/tcp/127.0.0.1/$port") 2> /dev/null && break
        sleep 0.1
    done
}

postmaster_pid() { head -n 1 "$1/postmaster.pid"; }

mkdir -p "$work/primary"
[ ${#as[@]} -eq 0 ] || chown nobody "$work/primary"
"${as[@]}" "$pgbin/initdb" -D "$work/primary/data" -U postgres --auth-local=trust -E UTF8 > "$work/initdb.log"
start_server primary 5432
"$pgbin/psql" -h "$work/primary" -p 5432 -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE workoutd LOGIN" -c "CREATE DATABASE gym OWNER workoutd"
server_version=$("$pgbin/postgres" --version)
pooler_version=$("$pgbouncer" --version | head -n 1)
start_pooler pooler "$work/primary" 5432
pooler_port=$port

steps=${BENCH_FLEET_STEPS:-1000,2000,3000}
common=(--seconds "${BENCH_FLEET_SECONDS:-60}" --workout-interval "${BENCH_FLEET_WORKOUT_INTERVAL:-180}"
    --heartbeat-interval "${BENCH_FLEET_HEARTBEAT:-30}")
echo "fleet: $steps hubs through PgBouncer (transaction pooling), $server_version" >&2
BENCH_METRICS_FILE="$work/steady.json" "$bin/FleetBenchmark" \
    --hub-url "postgresql://workoutd@127.0.0.1:$pooler_port/gym?sslmode=disable" \
    --watch "$work/primary:5432" --state-dir "$work/hubs" --hub-prefix gym --steps "$steps" "${common[@]}" \
    --server-pids "$(postmaster_pid "$work/primary/data"),${poolers[0]}" | tee "$work/steady.md"
rm -rf "$work/hubs"

failover_hubs=${BENCH_FLEET_FAILOVER_HUBS:-1000}
metrics=("$work/steady.json")
if [ "$failover_hubs" -gt 0 ]; then
    # A streaming standby of the primary, synchronous: a commit the primary acknowledged is on the standby too, so
    # a promotion loses nothing a hub was told had landed.
    mkdir -p "$work/standby"
    [ ${#as[@]} -eq 0 ] || chown nobody "$work/standby"
    "${as[@]}" "$pgbin/pg_basebackup" -h "$work/primary" -p 5432 -U postgres -D "$work/standby/data" -R -X stream
    start_server standby 5433
    "$pgbin/psql" -h "$work/primary" -p 5432 -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
        -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" > /dev/null
    start_pooler standby-pooler "$work/standby" 5433
    standby_pooler_port=$port
    cat > "$work/failover.sh" <<SH
set -e
${as[*]} "$pgbin/pg_ctl" -D "$work/primary/data" -m immediate -w stop > /dev/null
${as[*]} "$pgbin/pg_ctl" -D "$work/standby/data" -w promote > /dev/null
SH
    hub_url="postgresql://workoutd@127.0.0.1:$pooler_port,127.0.0.1:$standby_pooler_port/gym?sslmode=disable&target_session_attrs=read-write"
    echo "fleet: failover under $failover_hubs hubs" >&2
    BENCH_METRICS_FILE="$work/failover.json" "$bin/FleetBenchmark" \
        --hub-url "$hub_url" --watch "$work/primary:5432" --state-dir "$work/hubs" --hub-prefix failover \
        --steps "$failover_hubs" "${common[@]}" \
        --failover-command "sh $work/failover.sh" --failover-after 20 --watch-after-failover "$work/standby:5433" \
        --server-pids "$(postmaster_pid "$work/standby/data"),${poolers[1]}" | tee "$work/failover.md"
    python3 - "$work/failover.json" <<'PY'
import json, sys
path = sys.argv[1]
figures = json.load(open(path))
# The failover run's own names, beside the steady run's.
renamed = {("failover_" + key if not key.startswith("failover_") else key): value for key, value in figures.items()
           if key in ("workouts_lost", "workouts_duplicated", "failover_resume_seconds")}
json.dump(renamed, open(path, "w"))
PY
    metrics+=("$work/failover.json")
fi
python3 "$root/Benchmarks/bench_floors.py" record fleet "${metrics[@]}"

{
    cat "$work/steady.md"
    if [ -f "$work/failover.md" ]; then
        echo
        grep -v -e '^|' "$work/failover.md" | sed '/^$/d'
    fi
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh fleet\`); each hub is workoutd's own SQLite store, engine and"
    echo "replication shipper in one driver process, a workout every ${BENCH_FLEET_WORKOUT_INTERVAL:-180} s per hub on"
    echo "average and a class of a tenth of the hubs every 30 s, heartbeats every ${BENCH_FLEET_HEARTBEAT:-30} s, through"
    echo "$pooler_version (transaction pooling, 20 server connections) into $server_version, all on this machine's cores."
    echo "Lag: a start's acknowledgement on its hub to its row in \`workouts\`. Server CPU: the cluster's processes and the"
    echo "pooler, in percent of one core. Floors: Benchmarks/Thresholds/fleet.json."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" fleet "A fleet of hubs through a pooler into one PostgreSQL" "$work/section.md"
