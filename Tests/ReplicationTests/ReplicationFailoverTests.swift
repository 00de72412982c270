import Foundation
import Synchronization
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// A central primary fails and its streaming standby is promoted while two real hubs stream workouts.
///
/// Both hubs name the two servers in one libpq multi-host URL; every workout they acknowledged ends up on the
/// promoted server exactly once.
@Suite(
    "replication failover to a promoted standby",
    .serialized,
    .enabled(if: TestLane.runsLiveDaemons, "starts PostgreSQL clusters and workoutd processes")
)
struct ReplicationFailoverTests {
    @Test func twoHubsResumeOnThePromotedStandbyExactlyOnce() throws {
        let primary = try PostgresCluster()
        let standby = try PostgresCluster(standbyOf: primary)
        // A commit the hub was told of must be on the standby too, or the promotion could lose it; central
        // deployments that promote run synchronous standbys for that reason (docs/operations.md).
        try primary.requireSynchronousStandby()
        let url =
            "postgresql://workoutd@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/gym?sslmode=disable"
        let hubs = try ["hub-failover-a", "hub-failover-b"].map {
            try ReplicationHub(hubID: $0, devices: 2, postgresURL: url, cluster: primary)
        }
        defer { for hub in hubs { hub.remove() } }
        for hub in hubs { try hub.start() }
        for hub in hubs {
            let status = try hub.waitForStatus("connected to the primary") {
                $0["central_host"] as? String == "127.0.0.1:\(primary.port)"
            }
            #expect(status["state"] as? String == "connected", "\(status)")
        }

        let cycles = 45
        let failover = FailoverClock()
        let results = LockedReplies()
        let loadFailure = LockedText()
        DispatchQueue.concurrentPerform(iterations: hubs.count) { index in
            let hub = hubs[index]
            do {
                let replies = try hub.withDaemonLogOnFailure {
                    try hub.runLoad(cycles: cycles, activeAtEnd: true) { n in
                        guard index == 0, n == cycles / 3 else { return }
                        do {
                            try failover.run(primary: primary, standby: standby, watching: hub)
                        } catch {
                            loadFailure.note("failover: \(error)")
                        }
                    }
                }
                for reply in replies { results.append(reply) }
            } catch {
                results.fail(error)
            }
        }
        #expect(loadFailure.value.isEmpty, "\(loadFailure.value)")
        let replies = try results.all()
        #expect(replies.count == hubs.count * 2 * (3 * cycles + 1))
        #expect(
            replies.allSatisfy({ $0.isSuccess }),
            "\(replies.first { !$0.isSuccess }.map(String.init(describing:)) ?? "")"
        )
        let resumed = try #require(failover.firstRowAfterPromotion, "no row reached the promoted server")

        for hub in hubs {
            try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
            let status = try hub.replicationStatus()
            #expect(status["central_host"] as? String == "127.0.0.1:\(standby.port)", "\(status)")
            #expect(try hub.replicationStatusLine().contains("open to 127.0.0.1:\(standby.port)"))
        }
        for hub in hubs { hub.stop() }
        // Every workout the hub stored is on the promoted server once, and nothing else of this hub is.
        for hub in hubs {
            let local = try localWorkoutIDs(of: hub)
            #expect(local.count == 2 * (cycles + 1), "\(hub.hubID): \(local.count) workouts stored")
            let central = try standby.psql(
                "SELECT workout_id || ':' || count(*) FROM workouts WHERE hub_id = '\(hub.hubID)' GROUP BY workout_id ORDER BY workout_id"
            ).split(separator: "\n").map(String.init)
            #expect(central == local.map { "\($0):1" }, "\(hub.hubID): central \(central.count), local \(local.count)")
            #expect(
                try standby.count(
                    "SELECT count(*) FROM workouts WHERE hub_id = '\(hub.hubID)' AND ended_at IS NOT NULL"
                )
                    == 2 * cycles
            )
            #expect(try standby.count("SELECT count(*) FROM shares WHERE hub_id = '\(hub.hubID)'") == 2 * cycles)
        }
        let fromStop = resumed.sinceStop.inMilliseconds
        let fromPromotion = resumed.sincePromotion.inMilliseconds
        print(
            "failover: first row on the promoted server \(fromPromotion) ms after the promotion, \(fromStop) ms after the primary stopped"
        )
        // The hubs back off while no host takes writes, so resuming takes a few backoff steps; far more means they
        // kept waiting for the dead address.
        #expect(fromPromotion < 15_000, "\(fromPromotion) ms from promotion to the first row shipped")
    }

    /// The ids of the workouts in the hub's own SQLite database, in order.
    func localWorkoutIDs(of hub: ReplicationHub) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [
            "-readonly", hub.directory + "/state/workoutd.sqlite", "SELECT id FROM workout ORDER BY id",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestingError("sqlite3 failed for \(hub.hubID)") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

/// The failover itself, and the time to the first row on the promoted server.
///
/// Stops the primary, sees the hub pass the read-only standby over, promotes it.
final class FailoverClock: @unchecked Sendable {
    struct Resumed {
        var sinceStop: Duration
        var sincePromotion: Duration
    }

    private let lock = NSLock()
    private var resumed: Resumed?

    var firstRowAfterPromotion: Resumed? { lock.withLock { resumed } }

    func run(primary: PostgresCluster, standby: PostgresCluster, watching hub: ReplicationHub) throws {
        try primary.stop(immediate: true)
        let stopped = ContinuousClock.now
        // The standby is up and answers, but takes no writes: a hub must not settle on it.
        try hub.waitForStatus(timeout: .seconds(60), "refusing the read-only standby") {
            ($0["last_error"] as? String ?? "").contains("read-only")
        }
        let rows = "SELECT (SELECT count(*) FROM workouts) + (SELECT count(*) FROM shares)"
        let before = try standby.count(rows)
        try standby.promote()
        let promoted = ContinuousClock.now
        while ContinuousClock.now - promoted < .seconds(60) {
            if try standby.count(rows) > before {
                let now = ContinuousClock.now
                lock.withLock { resumed = Resumed(sinceStop: now - stopped, sincePromotion: now - promoted) }
                return
            }
            usleep(10_000)
        }
    }
}
