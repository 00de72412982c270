import Foundation
import Synchronization
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// Replication against a real PostgreSQL cluster and the real daemon.
///
/// Every workout and share reaches the central tables exactly once, through outages, crashes and many hubs,
/// and devices never wait for it.
@Suite("replication to a central PostgreSQL", .serialized)
struct ReplicationTests {
    /// The central rows of one hub, as a gym owner would count them.
    struct CentralRows: Equatable, CustomStringConvertible {
        var workouts: Int
        var distinctWorkouts: Int
        var ended: Int
        var endedWithDuration: Int
        var shares: Int
        var sharesOfKnownWorkouts: Int

        init(hub: String, in cluster: PostgresCluster) throws {
            let row = try cluster.psql(
                """
                SELECT (SELECT count(*) FROM workouts WHERE hub_id = '\(hub)'),
                       (SELECT count(DISTINCT workout_id) FROM workouts WHERE hub_id = '\(hub)'),
                       (SELECT count(*) FROM workouts WHERE hub_id = '\(hub)' AND ended_at IS NOT NULL),
                       (SELECT count(*) FROM workouts WHERE hub_id = '\(hub)' AND ended_at >= started_at AND duration_seconds >= 0),
                       (SELECT count(*) FROM shares WHERE hub_id = '\(hub)'),
                       (SELECT count(*) FROM shares s JOIN workouts w USING (hub_id, workout_id)
                         WHERE s.hub_id = '\(hub)' AND w.ended_at IS NOT NULL AND s.service = 'twitter')
                """
            ).split(separator: "|").compactMap { Int($0) }
            guard row.count == 6 else { throw TestingError("unexpected psql row for hub \(hub): \(row)") }
            (workouts, distinctWorkouts, ended, endedWithDuration, shares, sharesOfKnownWorkouts) = (
                row[0], row[1], row[2], row[3], row[4], row[5]
            )
        }

        /// `cycles` ended-and-shared workouts plus `active` still running.
        static func expected(cycles: Int, active: Int) -> (workouts: Int, ended: Int, shares: Int) {
            (cycles + active, cycles, cycles)
        }

        func isComplete(cycles: Int, active: Int) -> Bool {
            workouts == cycles + active && distinctWorkouts == workouts && ended == cycles
                && endedWithDuration == cycles
                && shares == cycles && sharesOfKnownWorkouts == cycles
        }

        var description: String {
            "\(workouts) workouts (\(distinctWorkouts) distinct, \(ended) ended, \(endedWithDuration) with duration), \(shares) shares (\(sharesOfKnownWorkouts) of ended workouts)"
        }
    }

    @Test func everyWorkoutAndShareArrivesExactlyOnce() throws {
        let cluster = try PostgresCluster()
        let hub = try ReplicationHub(
            hubID: "hub-exactly-once",
            devices: 3,
            postgresURL: cluster.url(),
            cluster: cluster
        )
        defer { hub.remove() }
        try hub.start()
        let cycles = 40
        let replies = try hub.runLoad(cycles: cycles, activeAtEnd: true)
        #expect(replies.count == 3 * (3 * cycles + 1))
        #expect(
            replies.allSatisfy({ $0.isSuccess }),
            "\(replies.first { !$0.isSuccess }.map(String.init(describing:)) ?? "")"
        )
        try hub.waitUntilShipped()

        let rows = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(rows.isComplete(cycles: 3 * cycles, active: 3), "\(rows)")
        #expect(
            try cluster.count(
                "SELECT count(*) FROM workouts WHERE hub_id = 'hub-exactly-once' AND ended_at IS NULL AND duration_seconds IS NULL"
            ) == 3
        )
        // Each device's workouts under its own device_id, with the command's fields.
        #expect(
            try cluster.count("SELECT count(DISTINCT device_id) FROM workouts WHERE hub_id = 'hub-exactly-once'") == 3
        )
        #expect(
            try cluster.count(
                "SELECT count(*) FROM workouts WHERE location LIKE 'Room %' AND date = '2020-03-16 19:45:13+00' AND intensity_level BETWEEN 1 AND 10"
            ) == 3 * cycles + 3
        )
        #expect(
            try cluster.psql(
                "SELECT software_version IS NOT NULL AND last_seen IS NOT NULL FROM hubs WHERE hub_id = 'hub-exactly-once'"
            ) == "t"
        )
        #expect(try cluster.count("SELECT max(version) FROM workoutd_schema") == 3)
        // The clock mark ships with each workout: one hub's clock was synchronised or not for all of this run
        // (this container's never is), so every row carries the same mark.
        #expect(
            try cluster.count(
                "SELECT count(DISTINCT COALESCE(clock_mark, '-')) FROM workouts WHERE hub_id = 'hub-exactly-once'"
            ) == 1
        )

        let status = try hub.replicationStatus()
        #expect(status["last_shipped_at"] is String, "\(status)")
        let line = try hub.replicationStatusLine()
        #expect(line.contains("connected since") && line.contains("0 pending"), "\(line)")
        let metrics = try Workoutctl.run(["--socket", hub.socket, "metrics"]).stdout
        #expect(
            metrics.contains("workoutd_replication_pending") && metrics.contains("workoutd_replication_connected"),
            "\(metrics.prefix(2000))"
        )
    }

    @Test func anOutageMidLoadLosesAndDoublesNothing() throws {
        let cluster = try PostgresCluster()
        let hub = try ReplicationHub(hubID: "hub-outage", devices: 2, postgresURL: cluster.url(), cluster: cluster)
        defer { hub.remove() }
        try hub.start()
        let cycles = 60
        let stopped = Atomic<Bool>(false)
        let outageError = LockedText()
        // The server dies a third of the way in and comes back at two thirds; the wearables never pause.
        let replies = try hub.withDaemonLogOnFailure {
            try hub.runLoad(cycles: cycles, activeAtEnd: true) { n in
                do {
                    if n == cycles / 3 {
                        try cluster.stop(immediate: true)
                        stopped.store(true, ordering: .relaxed)
                    } else if n == 2 * cycles / 3, stopped.load(ordering: .relaxed) {
                        defer { outageError.note((try? cluster.start()) == nil ? " (restart failed)" : "") }
                        // Seen while the server was down: the reason, and the backlog waiting locally.
                        let status = try hub.waitForStatus("disconnected with a backlog") {
                            $0["state"] as? String == "disconnected" && ($0["pending"] as? Int ?? 0) > 0
                                && $0["last_error"] is String
                        }
                        outageError.set("\(status["last_error"] ?? "")")
                    }
                } catch {
                    outageError.set("outage step failed: \(error)")
                }
            }
        }
        #expect(replies.count == 2 * (3 * cycles + 1))
        #expect(replies.allSatisfy({ $0.isSuccess }), "devices are acked throughout the outage")
        print("outage reason shown: \(outageError.value)")
        #expect(
            !outageError.value.isEmpty && !outageError.value.hasPrefix("outage step failed"),
            "\(outageError.value)"
        )
        #expect(
            !outageError.value.contains("Generic description"),
            "a reason a person can act on: \(outageError.value)"
        )
        try hub.waitUntilShipped()
        let rows = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(rows.isComplete(cycles: 2 * cycles, active: 2), "\(rows)")
        // Logged when the reason changes, not once per retry: at least as many failed attempts as log lines, and no
        // line repeats the reason of the one before.
        let log = hub.daemon?.log ?? ""
        let reasons = log.split(separator: "\n").filter { $0.contains("replication disconnected") }.map { line in
            line.range(of: " error=").map { line[$0.upperBound...].components(separatedBy: " retry_in=")[0] }
                ?? String(line)
        }
        #expect(!reasons.isEmpty, "the outage is logged:\n\(log)")
        #expect(zip(reasons, reasons.dropFirst()).allSatisfy { $0 != $1 }, "a reason logged twice in a row: \(reasons)")
        // The server went away cleanly (FIN, refused connects): noticed from the connection itself, not by
        // the shipper's operation deadline (which a query stuck on a dead connection would need).
        #expect(!reasons.contains { $0.contains("no answer from the server") }, "\(reasons)")
        let metrics = try Workoutctl.run(["--socket", hub.socket, "metrics"]).stdout
        let failures =
            metrics.split(separator: "\n").first { $0.hasPrefix("workoutd_replication_failures_total") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } } ?? 0
        #expect(Int(failures) >= reasons.count, "\(reasons.count) log lines for \(failures) failed attempts")
    }

    @Test func killDuringAShippedBatchStillShipsExactlyOnce() throws {
        let cluster = try PostgresCluster()
        let cycles = 30
        let hub = try startedHubWithALoadShipped("hub-crash", cycles: cycles, in: cluster)
        defer { hub.remove() }

        // Hold the hubs table: the next batch writes its workouts, then waits for the lock inside its
        // transaction. Kill -9 then, with that batch provably in flight.
        let holder = try holdHubsTable(in: cluster)
        defer { holder.release() }
        #expect(
            try hub.runLoad(cycles: cycles, tag: "b").allSatisfy({ $0.isSuccess }),
            "devices are acked while shipping is blocked"
        )
        try waitUntil("a batch waits on the lock") {
            try cluster.count(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = 'workoutd' AND wait_event_type = 'Lock'"
            ) >= 1
        }
        let daemon = try #require(hub.daemon)
        daemon.signal(SIGKILL)
        #expect(try daemon.waitForExit() == SIGKILL)
        hub.daemon = nil
        holder.release()

        try hub.start()
        #expect(try hub.runLoad(cycles: cycles, tag: "c").allSatisfy({ $0.isSuccess }))
        try hub.waitUntilShipped()
        let rows = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(rows.isComplete(cycles: 2 * 3 * cycles, active: 0), "\(rows)")
    }

    /// The pool: while one batch commits, the next one is read and sent on the second connection.
    ///
    /// Here the committing batch waits for the held hubs table inside its transaction; the next commits only after it.
    /// Never more connections than `replication.max_connections`, opened at start and kept.
    @Test func batchesOverlapOnASmallPoolAndStillLandInOrder() throws {
        let cluster = try PostgresCluster()
        let cycles = 20
        // Two connections, and no heartbeat while the hubs table is held (it waits for the batches in flight).
        let hub = try startedHubWithALoadShipped(
            "hub-pool",
            cycles: cycles,
            in: cluster,
            replicationKeys: "  max_connections: 2\n  heartbeat_interval_s: 3600\n"
        )
        defer { hub.remove() }
        let connections = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workoutd hub-pool'"
        var most = 0
        func open() throws -> Int {
            let count = try cluster.count(connections)
            most = max(most, count)
            return count
        }

        let holder = try holdHubsTable(in: cluster)
        defer { holder.release() }
        let waitingOnLocks =
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workoutd hub-pool' AND wait_event_type = 'Lock'"
        #expect(
            try hub.runLoad(cycles: cycles, tag: "b").allSatisfy({ $0.isSuccess }),
            "devices are acked while shipping waits"
        )
        try hub.withDaemonLogOnFailure {
            try waitUntil("a batch waits for the lock") { try open() >= 1 && cluster.count(waitingOnLocks) >= 1 }
        }
        // Committed after that batch was read: the next batch, on a second connection, sent while the first waits.
        #expect(
            try hub.runLoad(cycles: cycles, tag: "c").allSatisfy({ $0.isSuccess }),
            "devices are acked while shipping waits"
        )
        try hub.withDaemonLogOnFailure {
            try waitUntil("the next batch is sent on the second connection") {
                try open() == 2
                    && cluster.count(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workoutd hub-pool' AND state <> 'idle'"
                    ) == 2
            }
        }
        let status = try hub.replicationStatus()
        #expect(status["connections"] as? Int == 2 && status["max_connections"] as? Int == 2, "\(status)")
        let backends = try cluster.psql(
            "SELECT string_agg(state, ',' ORDER BY state) FROM pg_stat_activity WHERE application_name = 'workoutd hub-pool'"
        )
        #expect(
            backends.components(separatedBy: ",").allSatisfy { $0.hasPrefix("idle in transaction") || $0 == "active" },
            "both connections are in a batch: \(backends)"
        )
        #expect(try hub.replicationStatusLine().contains("2 of 2 connections open"))
        #expect(
            try CentralRows(hub: hub.hubID, in: cluster).isComplete(cycles: 2 * cycles, active: 0),
            "nothing of the held batches is visible yet"
        )

        holder.release()
        try hub.waitUntilShipped()
        let rows = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(rows.isComplete(cycles: 3 * 2 * cycles, active: 0), "\(rows)")
        #expect(try open() == 2, "both kept for the next batches")
        #expect(most == 2, "never more than replication.max_connections")
        #expect(try hub.replicationStatus()["connections"] as? Int == 2)
    }

    /// Back-fill: history from periods without replication reaches the central database once it is on.
    ///
    /// That is a hub's history from before replication was turned on, and from a later period with it off again: every
    /// workout and share arrives exactly once.
    @Test func historyCommittedWithoutReplicationIsShippedOnceItIsOn() throws {
        let cluster = try PostgresCluster()
        let hub = try ReplicationHub(hubID: "hub-back-fill", devices: 2, postgresURL: cluster.url(), cluster: cluster)
        defer { hub.remove() }
        let cycles = 25
        try hub.start(replication: false)
        #expect(try hub.runLoad(cycles: cycles, tag: "a").allSatisfy({ $0.isSuccess }))
        hub.stop()
        #expect(
            try cluster.count("SELECT count(*) FROM pg_tables WHERE tablename = 'workouts'") == 0,
            "nothing shipped while off"
        )

        try hub.start()
        try hub.waitUntilShipped()
        let before = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(before.isComplete(cycles: 2 * cycles, active: 0), "\(before)")
        #expect(hub.daemon?.log.contains("history committed without it queued for shipping") == true)

        // Off again for a while (workouts left active), then on; then a restart with nothing new.
        hub.stop()
        try hub.start(replication: false)
        #expect(try hub.runLoad(cycles: cycles, activeAtEnd: true, tag: "b").allSatisfy({ $0.isSuccess }))
        hub.stop()
        try hub.start()
        try hub.waitUntilShipped()
        hub.stop()
        try hub.start()
        try hub.waitUntilShipped()
        #expect(
            hub.daemon?.log.contains("history committed without it queued") == false,
            "a complete store queues nothing again"
        )
        let after = try CentralRows(hub: hub.hubID, in: cluster)
        #expect(after.isComplete(cycles: 2 * 2 * cycles, active: 2), "\(after)")
    }

    @Test func twentyHubsShipToOneServerAtOnce() throws {
        let cluster = try PostgresCluster()
        let hubCount = 20
        let cycles = 10
        let hubs = try (0..<hubCount).map { index in
            try ReplicationHub(hubID: "hub-\(index)", devices: 1, postgresURL: cluster.url(), cluster: cluster)
        }
        // Started and stopped side by side: one after the other, twenty debug daemons cost minutes.
        defer { simultaneously(hubCount) { hubs[$0].remove() } }
        try startAndLoadSideBySide(hubs, cycles: cycles)
        for hub in hubs {
            try hub.waitUntilShipped()
            let rows = try CentralRows(hub: hub.hubID, in: cluster)
            #expect(rows.isComplete(cycles: cycles, active: 0), "\(hub.hubID): \(rows)")
        }
        #expect(try cluster.count("SELECT count(*) FROM hubs") == hubCount)
        #expect(try cluster.count("SELECT count(*) FROM workouts") == hubCount * cycles)
    }

    @Test(arguments: [
        ("wrong password", "password authentication failed"),
        ("unknown host", "connection failed"),
        ("TLS required, not offered", "does not offer TLS"),
    ])
    func aServerItCannotUseLeavesDevicesServedAndSaysWhy(problem: String, expectedError: String) throws {
        let cluster = try PostgresCluster()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wd-repl-bad-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url: String
        var passwordFile: String? = nil
        switch problem {
        case "wrong password":
            url = cluster.url()
            passwordFile = try cluster.writePasswordFile(in: directory, password: "not-the-password")
        case "unknown host":
            url = "postgresql://workoutd@no-such-host.invalid:\(cluster.port)/gym?sslmode=disable"
        default:
            url = cluster.url(sslmode: "require")
        }
        let hub = try ReplicationHub(
            hubID: "hub-bad",
            devices: 1,
            postgresURL: url,
            passwordFile: passwordFile,
            cluster: cluster
        )
        defer { hub.remove() }
        try hub.start()
        let replies = try hub.runLoad(cycles: 3)
        #expect(replies.count == 9 && replies.allSatisfy({ $0.isSuccess }), "devices are served whatever the server")
        let status = try hub.waitForStatus(timeout: .seconds(60), "disconnected with the reason") {
            $0["state"] as? String == "disconnected" && $0["pending"] as? Int == 9 && $0["last_error"] is String
        }
        let error = status["last_error"] as? String ?? ""
        #expect(error.contains(expectedError), "\(problem): \(error)")
        let line = try hub.replicationStatusLine()
        #expect(
            line.contains("disconnected since") && line.contains("9 pending") && line.contains("last error"),
            "\(line)"
        )
        #expect(
            !(hub.daemon?.log ?? "").contains("not-the-password")
                && !(hub.daemon?.log ?? "").contains(PostgresCluster.password),
            "the password is never logged"
        )
        #expect(try cluster.count("SELECT count(*) FROM pg_tables WHERE tablename = 'workouts'") == 0)
    }

    /// An administrator renames the hub and raises the log level in one edit.
    ///
    /// The rename waits for a restart (and says so) without costing the live change, and shipping carries on under the
    /// hub's first name.
    @Test func aReloadNamesTheHubChangeAsPendingAndAppliesTheRest() throws {
        let cluster = try PostgresCluster()
        let hub = try ReplicationHub(hubID: "hub-reload", devices: 1, postgresURL: cluster.url(), cluster: cluster)
        defer { hub.remove() }
        try hub.start()
        let daemon = try #require(hub.daemon)
        #expect(try hub.runLoad(cycles: 2).allSatisfy({ $0.isSuccess }))
        try hub.waitUntilShipped()

        let original = try String(contentsOfFile: hub.configFile, encoding: .utf8)
        try original.replacingOccurrences(of: "hub_id: \"hub-reload\"", with: "hub_id: \"hub-renamed\"")
            .replacingOccurrences(of: "log_level: info", with: "log_level: debug")
            .write(toFile: hub.configFile, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("configuration reloaded")
        #expect(daemon.log.contains("replication.hub_id changed; takes effect after restart"), "\(daemon.log)")
        #expect(!daemon.log.contains("reload rejected"), "\(daemon.log)")
        let status = try Workoutctl.run(["--socket", hub.socket, "status", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(object?["pendingRestart"] as? [String] == ["replication.hub_id"], "\(status.stdout)")

        // log_level applied: a command now leaves a debug line; the rows keep the running hub's name.
        #expect(try hub.runLoad(cycles: 1, tag: "after").allSatisfy({ $0.isSuccess }))
        try daemon.waitForLog("command acknowledged")  // the debug line of a command after the reload
        try hub.waitUntilShipped()
        #expect(try CentralRows(hub: "hub-reload", in: cluster).isComplete(cycles: 3, active: 0))
        #expect(try cluster.count("SELECT count(*) FROM workouts WHERE hub_id = 'hub-renamed'") == 0)
    }

    /// A running hub with two devices whose first load (`cycles` per device, tag "a") is shipped.
    private func startedHubWithALoadShipped(
        _ hubID: String,
        cycles: Int,
        in cluster: PostgresCluster,
        replicationKeys: String = ""
    ) throws -> ReplicationHub {
        let hub = try ReplicationHub(hubID: hubID, devices: 2, postgresURL: cluster.url(), cluster: cluster)
        do {
            try hub.appendToReplicationSection(replicationKeys)
            try hub.start()
            #expect(try hub.runLoad(cycles: cycles, tag: "a").allSatisfy({ $0.isSuccess }))
            try hub.waitUntilShipped()
        } catch {
            hub.remove()
            throw error
        }
        return hub
    }

    /// A batch shipped while the hubs table is held waits inside its transaction, as long as it is held.
    struct HubsTableHolder {
        let process: Process
        let cluster: PostgresCluster

        func release() {
            guard process.isRunning else { return }
            process.terminate()
            _ = try? cluster.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()"
            )
        }
    }

    private func holdHubsTable(in cluster: PostgresCluster) throws -> HubsTableHolder {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = [
            "-c",
            "exec runuser -u nobody -- psql -X -q -h '\(cluster.directory)' -p \(cluster.port) -U postgres -d gym -c 'BEGIN; LOCK TABLE hubs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600); COMMIT;' > /dev/null 2>&1",
        ]
        try holder.run()
        let held = HubsTableHolder(process: holder, cluster: cluster)
        do {
            try waitUntil("the lock is held") {
                try cluster.count(
                    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'hubs' AND l.mode = 'AccessExclusiveLock' AND l.granted"
                ) == 1
            }
        } catch {
            held.release()
            throw error
        }
        return held
    }

    private func waitUntil(_ what: String, timeout: Duration = .seconds(60), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return }
            usleep(50_000)
        }
        throw TestingError("timed out waiting until \(what)")
    }
}

/// Runs `body` for every index at once, each on its own thread.
///
/// concurrentPerform runs only as many at a time as there are cores: two here, which is not "all loads at once".
func simultaneously(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            body(index)
            group.leave()
        }
    }
    group.wait()
}

final class LockedText: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func set(_ value: String) { lock.withLock { text = value } }
    func note(_ value: String) { lock.withLock { text += value } }
    var value: String { lock.withLock { text } }
}
