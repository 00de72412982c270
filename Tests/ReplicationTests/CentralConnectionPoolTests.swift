import Logging
import NIOPosix
import PostgresNIO
import Synchronization
import Testing
import WorkoutdTesting

@testable import Replication

/// The shipper's connection pool against a real PostgreSQL server.
///
/// Connections are reused, never more than the maximum are open, a failed one is replaced, and why a connection cannot
/// be opened reaches the caller.
@Suite("central connection pool", .serialized, .timeLimit(.minutes(2)))
struct CentralConnectionPoolTests {
    let cluster: PostgresCluster
    let logger = Logger(label: "pool-test")

    init() throws {
        cluster = try PostgresCluster()
    }

    /// A pool that opens real connections to the test server as `workoutd`, with `password`.
    func pool(
        maximum: Int,
        password: @escaping @Sendable () -> String = { PostgresCluster.password },
        generation: @escaping @Sendable () -> Int = { 0 }
    ) throws -> CentralConnectionPool {
        var settings = try ReplicationConfiguration(url: cluster.url(), passwordFile: nil, hubID: "pool-test")
        // The heavy lane starts many servers and daemons at once; a connection may wait long for its turn.
        settings.connectTimeout = .seconds(60)
        let configuration = settings
        let logger = self.logger
        return CentralConnectionPool(maximumConnections: maximum, currentGeneration: generation) { id in
            try await configuration.connect(
                to: configuration.endpoints[0],
                password: password(),
                id: id,
                logger: logger
            )
        }
    }

    /// The server process behind a connection: the same pid is the same connection.
    func backend(_ lease: CentralConnectionPool.Lease) async throws -> Int {
        var pid = 0
        for try await value in try await lease.connection.query("SELECT pg_backend_pid()", logger: logger).decode(
            Int.self
        ) {
            pid = value
        }
        return pid
    }

    var serverConnections: Int {
        get throws {
            try cluster.count("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workoutd pool-test'")
        }
    }

    @Test func connectionsAreReusedAndNeverMoreThanTheMaximumOpen() async throws {
        let pool = try pool(maximum: 2)
        let first = try await pool.lease()
        let second = try await pool.lease()
        let (firstPID, secondPID) = (try await backend(first), try await backend(second))
        #expect(firstPID != secondPID)
        #expect(try serverConnections == 2)

        // A third lease waits for one to come back, and gets that very connection.
        let third = Task { try await pool.lease() }
        await pool.release(first, reusable: true)
        let reused = try await third.value
        #expect(try await backend(reused) == firstPID)
        #expect(await pool.openCount == 2)
        #expect(try serverConnections == 2)

        await pool.release(reused, reusable: true)
        await pool.release(second, reusable: true)
        await pool.trim(toAtMost: 1)
        #expect(await pool.openCount == 1)
        #expect(await pool.peakOpenCount == 2)
        await pool.close()
        #expect(await pool.openCount == 0)
    }

    @Test func aConnectionThatFailedIsClosedAndReplaced() async throws {
        let pool = try pool(maximum: 1)
        let first = try await pool.lease()
        let firstPID = try await backend(first)
        await pool.release(first, reusable: false)
        let next = try await pool.lease()
        #expect(try await backend(next) != firstPID, "a new connection, not the failed one")
        #expect(await pool.openCount == 1)
        await pool.release(next, reusable: true)
        await pool.close()
    }

    @Test func whyItCannotConnectReachesTheLeaseAndFreesThePlace() async throws {
        let password = Mutex("not-the-password")
        let pool = try pool(maximum: 1, password: { password.withLock { $0 } })
        do {
            _ = try await pool.lease()
            Issue.record("a wrong password was accepted")
        } catch {
            let reason = ReplicationShipper.describe(error)
            #expect(reason.contains("password authentication failed"), "\(reason)")
        }
        #expect(await pool.openCount == 0)
        // The place is free again: the right password gets a connection.
        password.withLock { $0 = PostgresCluster.password }
        let lease = try await pool.lease()
        #expect(try await backend(lease) > 0)
        await pool.release(lease, reusable: true)
        await pool.close()
    }

    @Test func aNewPasswordGenerationRetiresIdleConnections() async throws {
        let generation = Atomic<Int>(0)
        let pool = try pool(maximum: 2, generation: { generation.load(ordering: .relaxed) })
        let first = try await pool.lease()
        let firstPID = try await backend(first)
        await pool.release(first, reusable: true)
        generation.add(1, ordering: .relaxed)
        let next = try await pool.lease()
        #expect(try await backend(next) != firstPID, "reconnected with the new password")
        #expect(await pool.openCount == 1, "the old one closed")
        await pool.release(next, reusable: true)
        await pool.close()
    }

    @Test func fillingOpensEveryPlaceAtOnceAndKeepsThemIdle() async throws {
        let pool = try pool(maximum: 2)
        try await pool.fill()
        #expect(await pool.openCount == 2)
        #expect(try serverConnections == 2)
        let (first, second) = (try await pool.lease(), try await pool.lease())
        #expect(try await backend(first) != backend(second))
        #expect(await pool.peakOpenCount == 2, "the leases took the filled connections")
        await pool.release(first, reusable: true)
        await pool.release(second, reusable: true)
        await pool.close()

        let refused = try self.pool(maximum: 3, password: { "not-the-password" })
        await #expect(throws: (any Error).self) { try await refused.fill() }
        #expect(await refused.openCount == 0, "no place is left taken by a failed start")
    }

    @Test func aWaitingLeaseEndsWhenCancelledOrWhenThePoolCloses() async throws {
        let pool = try pool(maximum: 1)
        let held = try await pool.lease()
        let cancelled = Task { try await pool.lease() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        let waiting = Task { try await pool.lease() }
        await pool.close()
        await #expect(throws: CentralConnectionPool.PoolClosedError.self) { try await waiting.value }
        await pool.release(held, reusable: true)
        #expect(await pool.openCount == 0, "given back to a closed pool, it is closed")
    }
}
