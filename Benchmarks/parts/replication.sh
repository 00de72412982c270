#!/usr/bin/env bash
# Benchmark part `replication`: what replication to a central PostgreSQL costs the device path, and
# how far behind it ships. One run, one private PostgreSQL 15 cluster (initdb/pg_ctl into a temp dir, as `nobody`
# when run as root, on a unix socket only), side by side:
#   - pipelined throughput through a pty (WorkoutdBenchmarks): in-memory store, durable store with replication
#     off, durable store with replication on; floor on on / off;
#   - lag (Benchmarks/Sources/ReplicationLag): 4 devices × 250 commands/s, start/end paced, from each
#     start_workout reply on its tty to the row being visible in `workouts`; floor on its p99;
#   - the same lag with the server at a distance (Benchmarks/probes/delay-proxy.py), one connection (the default) against two.
# Run through `bash Benchmarks/bench.sh replication`; needs Debian's `postgresql` package and a C compiler (cc).
#
# Environment: BENCH_COMMANDS (pipelined commands per round, default 100000), BENCH_ROUNDS (5),
# BENCH_ROUND_TRIPS (20000), BENCH_WARM_UP (2000), BENCH_LAG_DEVICES (4), BENCH_LAG_RATE (250 per device),
# BENCH_LAG_SECONDS (12), BENCH_DISTANT_DELAY_MS (15, each way).
set -euo pipefail

root=${BENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$pgbin/initdb" ] || { echo "replication: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }

bin=$(bash "$root/Benchmarks/bench-build.sh" workoutd WorkoutdBenchmarks ReplicationLag)

work=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench.XXXXXX")
# The cluster's directory holds its socket; initdb refuses to run as root, so as root it belongs to nobody.
pg=$(mktemp -d "${TMPDIR:-/tmp}/workoutd-bench-pg.XXXXXX")
as=()
if [ "$(id -u)" -eq 0 ]; then
    chown nobody "$pg"
    as=(runuser -u nobody --)
fi
proxy=""
stop_cluster() {
    [ -z "$proxy" ] || kill "$proxy" 2> /dev/null || true
    "${as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -w -t 60 -m fast stop > /dev/null 2>&1 || true
    rm -rf "$work" "$pg"
}
trap stop_cluster EXIT
"${as[@]}" "$pgbin/initdb" -D "$pg/data" -U postgres --auth-local=trust --no-sync -E UTF8 > "$pg/initdb.log"
# Default durability (fsync on), no TCP: the socket in the private directory is the only way in.
"${as[@]}" "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -t 60 \
    -o "-k $pg -c listen_addresses= -c max_connections=100" start > /dev/null
"$pgbin/psql" -h "$pg" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE workoutd LOGIN" -c "CREATE DATABASE gym OWNER workoutd"
server=$("$pgbin/postgres" --version)

cc -O2 -Wall -o "$work/echo-baseline" Benchmarks/peers/echo-baseline.c

# Explicit configurations, so /etc/workoutd/workoutd.yaml on this machine cannot change what is measured.
cat > "$work/workoutd.yaml" <<YAML
log_level: info
YAML
url="postgresql://workoutd@localhost/gym?host=$pg&sslmode=disable"
cat > "$work/replicated.yaml" <<YAML
log_level: info
replication:
  postgres_url: "$url"
YAML
cat > "$work/lag.yaml" <<YAML
log_level: info
replication:
  postgres_url: "$url"
  hub_id: "bench-lag"
YAML
# Measured without the per-device rate limit where the binary has one: a benchmark floods on purpose.
# Nor the pending-share limit: a pipelined round queues a share every third command, faster than delivery waits for.
limits=""
grep -qa limits.commands_per_second "$bin/workoutd" && limits+="  commands_per_second: 0\n"
grep -qa limits.pending_shares_per_device "$bin/workoutd" && limits+="  pending_shares_per_device: 0\n"
unlimited() { if [ -n "$limits" ]; then printf 'limits:\n%b' "$limits" >> "$1"; fi; }
for config in workoutd replicated lag; do unlimited "$work/$config.yaml"; done

workoutd="$bin/workoutd serve --control-socket $work/control-{run}.sock"
programs=(--baseline "echo baseline (C)=$work/echo-baseline {device}")
programs+=(--subject "workoutd, in-memory store=$workoutd --config $work/workoutd.yaml --in-memory --state-dir $work/memory-{run} --device {device}")
programs+=(--durable "workoutd, durable store, replication off=$workoutd --config $work/workoutd.yaml --state-dir $work/off-{run} --device {device}")
# Each start is a hub of its own in the central database, so no run finds the rows of the one before.
programs+=(--replicated "workoutd, durable store, replication on=env WORKOUTD_REPLICATION_HUB_ID=bench-on-{run} $workoutd --config $work/replicated.yaml --state-dir $work/on-{run} --device {device}")

# The floors: Benchmarks/Thresholds/replication.json; the figures they hold go to Benchmarks/Results/replication.json.
BENCH_METRICS_FILE="$work/throughput.json" "$bin/WorkoutdBenchmarks" "${programs[@]}" \
    --commands "${BENCH_COMMANDS:-100000}" --rounds "${BENCH_ROUNDS:-5}" \
    --round-trips "${BENCH_ROUND_TRIPS:-20000}" --warm-up "${BENCH_WARM_UP:-2000}" --thresholds replication \
    | tee "$work/throughput.md"

shipped=$("$pgbin/psql" -h "$pg" -U postgres -d gym -At -c "SELECT count(*) FROM workouts WHERE hub_id LIKE 'bench-on-%'")

# The pool against one connection, with the server at a network distance: the same paced load through a proxy
# that holds every chunk BENCH_DISTANT_DELAY_MS (default 15) each way, so every query costs a round trip of twice
# that, as to a server in another building. One connection ships a batch at a time; two overlap them.
distant="$work/distant"
mkdir "$distant"
python3 Benchmarks/probes/delay-proxy.py "$distant/.s.PGSQL.5432" "$pg/.s.PGSQL.5432" "${BENCH_DISTANT_DELAY_MS:-15}" &
proxy=$!
for _ in $(seq 100); do [ -S "$distant/.s.PGSQL.5432" ] && break; sleep 0.05; done
cat > "$work/distant.yaml" <<YAML
log_level: info
replication:
  postgres_url: "postgresql://workoutd@localhost/gym?host=$distant&sslmode=disable"
YAML
unlimited "$work/distant.yaml"
for connections in 1 2; do
    "$bin/ReplicationLag" --socket-dir "$pg" --hub-id "bench-distant-$connections" \
        --devices "${BENCH_LAG_DEVICES:-4}" --rate "${BENCH_LAG_RATE:-250}" --seconds "${BENCH_LAG_SECONDS:-12}" \
        -- /usr/bin/env WORKOUTD_REPLICATION_HUB_ID="bench-distant-$connections" WORKOUTD_REPLICATION_MAX_CONNECTIONS=$connections \
        "$bin/workoutd" serve --config "$work/distant.yaml" --state-dir "$work/distant-$connections" \
        --control-socket "$work/distant-$connections.sock" > "$work/distant-$connections.md"
done
kill "$proxy"
proxy=""
p99() { grep -F 'p99' "$1" | awk -F'|' '{gsub(/[ ms]/, "", $3); print $3}'; }
p50() { grep -F 'p50' "$1" | awk -F'|' '{gsub(/[ ms]/, "", $3); print $3}'; }
# Two rows more for the lag table.
{
    echo "| start reply → row, p50 / p99, server ${BENCH_DISTANT_DELAY_MS:-15} ms away each way: one connection (default) | $(p50 "$work/distant-1.md") / $(p99 "$work/distant-1.md") ms | | |"
    echo "| the same, two connections (\`max_connections: 2\`) | $(p50 "$work/distant-2.md") / $(p99 "$work/distant-2.md") ms | | |"
} > "$work/distant.md"
cat "$work/distant.md"

BENCH_METRICS_FILE="$work/lag.json" "$bin/ReplicationLag" --socket-dir "$pg" --hub-id bench-lag \
    --devices "${BENCH_LAG_DEVICES:-4}" --rate "${BENCH_LAG_RATE:-250}" --seconds "${BENCH_LAG_SECONDS:-12}" \
    -- "$bin/workoutd" serve --config "$work/lag.yaml" --state-dir "$work/lag" --control-socket "$work/lag.sock" \
    | tee "$work/lag.md"
python3 "$root/Benchmarks/bench_floors.py" record replication "$work/throughput.json" "$work/lag.json"

method=$(sed -n 's/^Pipelined: \([0-9]*\) commands.*median of \([0-9]*\) rounds.*Single-flight: \([0-9]*\) round trips.*/\1 pipelined commands (median of \2 rounds), \3 single-flight round trips/p' "$work/throughput.md")
{
    # The ratios without a floor (against the C echo) are left out: the floors are what this part decides. The
    # paragraph on the method is said in the Command note, in one clause.
    grep -v -E '^\| [^|]+ \| [0-9.]+ \| \| \|$' "$work/throughput.md" \
        | awk '/^Pipelined: / { skip = 1; next } skip && !NF { skip = 0; next } { skip = 0; print }'
    echo
    grep -v -F -e ', p50 |' -e ', max |' "$work/lag.md"  # the p99 has the floor
    cat "$work/distant.md"
    echo
    echo "Command: \`make bench\` (\`bash Benchmarks/bench.sh replication\`), $method as in the pty part; $server, a private"
    echo "cluster on a unix socket sharing the hub's cores and disk: $shipped workouts (of about 174,000 written) had shipped when the replicated runs"
    echo "stopped. Floors: Benchmarks/Thresholds/replication.json (rounds alternate; the lag at 1,000 commands/s, start and end paced)."
} > "$work/section.md"
bash "$root/Benchmarks/bench-record.sh" replication "Replication to a central PostgreSQL: device-path cost and lag" "$work/section.md"
