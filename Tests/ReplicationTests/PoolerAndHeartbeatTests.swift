import Foundation
import Testing
import WorkoutdTesting

@testable import Replication

#if canImport(Glibc)
import Glibc
#endif

/// Replication through Debian's PgBouncer in transaction mode, and the hubs' heartbeats.
///
/// Real daemons, a real cluster and a real pooler, all on loopback.
@Suite(
    "replication through a pooler, and heartbeats",
    .serialized,
    .enabled(if: TestLane.runsLiveDaemons, "starts PostgreSQL, PgBouncer and workoutd processes")
)
struct PoolerAndHeartbeatTests {
    typealias CentralRows = ReplicationTests.CentralRows

    /// The hub's row of `hubs`, column by column, as an operator reads it with psql.
    struct HubRow {
        var values: [String: String]

        init?(hub: String, in cluster: PostgresCluster) throws {
            let plain = [
                "name", "software_version", "architecture", "heartbeat_interval_s", "wearables_connected",
                "active_workouts", "backlog", "last_error", "central_host",
            ]
            let columns =
                plain.map { ($0, $0) } + [
                    ("started_at", "extract(epoch FROM started_at)"), ("last_seen", "extract(epoch FROM last_seen)"),
                    ("now", "extract(epoch FROM now())"),
                ]
            let text = try cluster.psql(
                "SELECT \(columns.map { "COALESCE((\($0.1))::text, '<null>')" }.joined(separator: ", ")) FROM hubs WHERE hub_id = '\(hub)'"
            )
            guard !text.isEmpty else { return nil }
            let fields = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == columns.count else { throw TestingError("unexpected hubs row: \(text)") }
            values = Dictionary(uniqueKeysWithValues: zip(columns.map(\.0), fields))
        }

        subscript(_ column: String) -> String { values[column] ?? "<missing>" }
        func int(_ column: String) -> Int? { Int(self[column]) }
        func seconds(_ column: String) -> Double? { Double(self[column]) }
    }

    @Test func aHubReplicatesThroughPgBouncerInTransactionModeExactlyOnce() throws {
        let cluster = try PostgresCluster()
        let bouncer = try PgBouncer(in: cluster, poolSize: 2)
        let hub = try ReplicationHub(
            hubID: "hub-pooled",
            devices: 3,
            postgresURL: bouncer.url(),
            cluster: cluster
        )
        defer { hub.remove() }
        try hub.appendToReplicationSection("  heartbeat_interval_s: 1\n  hub_name: \"Gym Pooled\"\n")
        try hub.start()
        let cycles = 30
        let replies = try hub.runLoad(cycles: cycles, activeAtEnd: true)
        #expect(replies.count == 3 * (3 * cycles + 1) && replies.allSatisfy({ $0.isSuccess }))
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }

        let rows = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(rows.isComplete(cycles: 3 * cycles, active: 3), "\(rows)")
        #expect(try cluster.count("SELECT max(version) FROM workoutd_schema") == CentralSchema.currentVersion)
        // The heartbeat came through the pooler too, and says what `workoutctl status` says.
        let row = try hub.withDaemonLogOnFailure {
            try waitForHubRow(hub.hubID, in: cluster, "3 wearables, 3 active workouts, nothing pending") { row in
                row.int("wearables_connected") == 3 && row.int("active_workouts") == 3 && row.int("backlog") == 0
            }
        }
        #expect(row["name"] == "Gym Pooled" && row.int("heartbeat_interval_s") == 1, "\(row.values)")
        #expect(row["software_version"] != "<null>" && row["architecture"] == machineArchitecture(), "\(row.values)")
        #expect(row["last_error"] == "<null>", "nothing failed: \(row.values)")
        #expect(row["central_host"] == "127.0.0.1:\(cluster.port)", "the server itself, behind the pooler")

        // Never more server connections than the pool, and none left in a transaction between batches.
        let pool = try bouncer.pool()
        #expect((pool["sv_active"] ?? 0) + (pool["sv_idle"] ?? 0) + (pool["sv_used"] ?? 0) <= 2, "\(pool)")
        #expect(pool["cl_active"] == 1, "the hub holds one client connection: \(pool)")
        #expect(
            try cluster.count(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = 'gym' AND state LIKE 'idle in transaction%'"
            ) == 0
        )
        #expect(!bouncer.log.contains("ERROR") && !bouncer.log.contains("WARNING"), "\(bouncer.log)")
        let daemonLog = hub.daemon?.log ?? ""
        #expect(!daemonLog.contains("prepared statement"), "no named statements through the pooler")
    }

    @Test func twentyHubsShareOnePoolerWithinItsPool() throws {
        let cluster = try PostgresCluster()
        let poolSize = 4
        let bouncer = try PgBouncer(in: cluster, poolSize: poolSize)
        let hubCount = 20
        let cycles = 10
        let hubs = try (0..<hubCount).map { index in
            try ReplicationHub(
                hubID: "pooled-\(index)",
                devices: 1,
                postgresURL: bouncer.url(),
                cluster: cluster
            )
        }
        defer { simultaneously(hubCount) { hubs[$0].remove() } }
        // The server's backends for the hubs, sampled all along: never more than the pool.
        let serverConnections =
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'gym' AND usename = 'workoutd' AND backend_type = 'client backend'"
        let sampler = PeakSampler { try cluster.count(serverConnections) }
        defer { sampler.stop() }

        try startAndLoadSideBySide(hubs, cycles: cycles)
        for hub in hubs {
            try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
            let rows = try CentralRows(hub: hub.hubID, in: cluster)
            #expect(rows.isComplete(cycles: cycles, active: 0), "\(hub.hubID): \(rows)")
        }
        #expect(try cluster.count("SELECT count(*) FROM workouts") == hubCount * cycles)
        #expect(try cluster.count("SELECT count(*) FROM shares") == hubCount * cycles)
        #expect(
            try cluster.count("SELECT count(*) FROM hubs WHERE last_seen IS NOT NULL AND name IS NOT NULL") == hubCount
        )

        sampler.stop()
        let pool = try bouncer.pool()
        #expect(
            (pool["cl_active"] ?? 0) + (pool["cl_waiting"] ?? 0) == hubCount,
            "each hub holds its one client connection: \(pool)"
        )
        #expect(
            (pool["sv_active"] ?? 0) + (pool["sv_idle"] ?? 0) + (pool["sv_used"] ?? 0) + (pool["sv_login"] ?? 0)
                <= poolSize,
            "\(pool)"
        )
        let peak = sampler.peak
        #expect(peak >= 1 && peak <= poolSize, "at most \(poolSize) server connections for \(hubCount) hubs: \(peak)")
        #expect(!bouncer.log.contains("ERROR"), "\(bouncer.log)")
    }

    /// Every second, the hub's row says how it is.
    ///
    /// last_seen moves on, the wearables and workouts are the hub's, the backlog is what waits, and the reason it waits.
    @Test func heartbeatsShowWhatTheHubHasAndWhatItCannotShip() throws {
        let cluster = try PostgresCluster()
        let hub = try ReplicationHub(hubID: "hub-beat", devices: 2, postgresURL: cluster.url(), cluster: cluster)
        defer { hub.remove() }
        try hub.appendToReplicationSection("  heartbeat_interval_s: 1\n  hub_name: \"Gym North\"\n")
        try hub.start()
        let first = try hub.withDaemonLogOnFailure {
            try waitForHubRow(hub.hubID, in: cluster, "2 wearables connected") { $0.int("wearables_connected") == 2 }
        }
        #expect(first["name"] == "Gym North" && first.int("backlog") == 0 && first.int("active_workouts") == 0)
        let started = try #require(first.seconds("started_at"))
        let firstSeen = try #require(first.seconds("last_seen"))
        #expect(started <= firstSeen + 5 && (first.seconds("now") ?? 0) - started < 600, "\(first.values)")
        let later = try waitForHubRow(hub.hubID, in: cluster, "last_seen moves on") {
            ($0.seconds("last_seen") ?? 0) >= firstSeen + 1.5
        }
        #expect(later["started_at"] == first["started_at"], "the start time stays the daemon's")

        // A workout left running shows as active.
        let wearable = hub.wearables[0]
        #expect(
            try decode(wearable.request(ReplicationHub.cycle(0, device: 0, tag: "beat")[0], timeout: .seconds(30)))
                .isSuccess
        )
        try waitForHubRow(hub.hubID, in: cluster, "1 active workout") { $0.int("active_workouts") == 1 }
        #expect(
            try decode(wearable.request(ReplicationHub.cycle(0, device: 0, tag: "beat")[1], timeout: .seconds(30)))
                .isSuccess
        )
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }

        // The server refuses the batches but not the heartbeat: the backlog and the reason show centrally.
        try cluster.psql(
            """
            CREATE FUNCTION held() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'held by the test'; END $$;
            CREATE TRIGGER held BEFORE INSERT OR UPDATE ON workouts FOR EACH ROW EXECUTE FUNCTION held();
            """
        )
        #expect(try hub.runLoad(cycles: 3, tag: "held").allSatisfy({ $0.isSuccess }))
        let held = try hub.withDaemonLogOnFailure {
            try waitForHubRow(hub.hubID, in: cluster, "a backlog and the reason") { row in
                (row.int("backlog") ?? 0) >= 18 && row["last_error"].contains("held by the test")
            }
        }
        let pending = try #require(hub.replicationStatus()["pending"] as? Int)
        #expect(held.int("backlog") == pending, "the backlog is what workoutctl status calls pending: \(held.values)")
        #expect(!held["last_error"].contains(PostgresCluster.password))

        try cluster.psql("DROP TRIGGER held ON workouts")
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        try waitForHubRow(hub.hubID, in: cluster, "nothing pending again") { $0.int("backlog") == 0 }
        // Six cycles, and the workout started and ended on its own.
        let rows = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(
            rows.workouts == 7 && rows.distinctWorkouts == 7 && rows.endedWithDuration == 7 && rows.shares == 6,
            "\(rows)"
        )
    }

    /// An older daemon's central schema (version 2) gains the heartbeat's columns.
    ///
    /// In one migration, keeping its rows.
    @Test func aVersionTwoCentralSchemaMigratesToThree() throws {
        let cluster = try PostgresCluster()
        let older = CentralSchema.migrations.prefix(2).flatMap { $0 }
        try cluster.psql(
            (["CREATE TABLE workoutd_schema (version int NOT NULL)"] + older
                + [
                    "INSERT INTO workoutd_schema (version) VALUES (1), (2)",
                    "INSERT INTO hubs (hub_id, last_seen, software_version) VALUES ('old-hub', '2026-01-02 03:04:05+00', '0.9')",
                    "ALTER TABLE workouts OWNER TO workoutd", "ALTER TABLE shares OWNER TO workoutd",
                    "ALTER TABLE hubs OWNER TO workoutd", "ALTER TABLE workoutd_schema OWNER TO workoutd",
                ]).joined(separator: ";\n")
        )
        #expect(try cluster.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'hubs'") == 3)

        let hub = try ReplicationHub(hubID: "hub-new", devices: 1, postgresURL: cluster.url(), cluster: cluster)
        defer { hub.remove() }
        try hub.start()
        #expect(try hub.runLoad(cycles: 2).allSatisfy({ $0.isSuccess }))
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        #expect(
            try cluster.psql("SELECT string_agg(version::text, ',' ORDER BY version) FROM workoutd_schema") == "1,2,3"
        )
        #expect(hub.daemon?.log.contains("central schema migrated") == true)
        let columns = try cluster.psql(
            "SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.columns WHERE table_name = 'hubs'"
        )
        #expect(
            columns
                == "active_workouts,architecture,backlog,central_host,heartbeat_interval_s,hub_id,last_error,last_seen,name,software_version,started_at,wearables_connected"
        )
        #expect(
            try cluster.psql(
                "SELECT last_seen = '2026-01-02 03:04:05+00' AND software_version = '0.9' AND name IS NULL FROM hubs WHERE hub_id = 'old-hub'"
            ) == "t",
            "the older hub's row is kept as it was"
        )
        #expect(try CentralRows(hub: hub.hubID, in: cluster).isComplete(cycles: 2, active: 0))
        #expect(try HubRow(hub: hub.hubID, in: cluster)?.int("heartbeat_interval_s") == 30)
    }

    @discardableResult
    private func waitForHubRow(
        _ hub: String,
        in cluster: PostgresCluster,
        _ what: String,
        timeout: Duration = .seconds(90),
        _ condition: (HubRow) -> Bool
    ) throws -> HubRow {
        let deadline = ContinuousClock.now + timeout
        var last: HubRow?
        while ContinuousClock.now < deadline {
            // Until the hub's first connection, the table may not exist yet.
            if let row = (try? HubRow(hub: hub, in: cluster)) ?? nil {
                last = row
                if condition(row) { return row }
            }
            usleep(200_000)
        }
        throw TestingError("the hubs row of \(hub) never showed \(what): \(last?.values ?? [:])")
    }

    private func machineArchitecture() -> String {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

/// The largest value `sample` gave, polled every 100 ms on a thread of its own until ``stop()``.
final class PeakSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var largest = 0

    init(_ sample: @escaping @Sendable () throws -> Int) {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                if let value = try? sample() { lock.withLock { largest = max(largest, value) } }
                usleep(100_000)
            }
        }
    }

    var peak: Int { lock.withLock { largest } }
    func stop() { lock.withLock { running = false } }
}
