import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Ships the store's committed changes to the central PostgreSQL, in commit order, exactly once.
///
/// Each batch is one central transaction of idempotent upserts keyed by the central primary keys; only
/// after it commits is the batch marked shipped locally. A crash in between ships the same rows again,
/// which changes nothing: every change lands exactly once. Woken by the store's doorbell after commits,
/// never by a timer while idle; while the server cannot be reached it retries with a capped backoff and
/// the backlog waits in SQLite. One connection: shipping in commit order is sequential by nature.
public final class ReplicationShipper: Service, Sendable {
    private let configuration: ReplicationConfiguration
    private let log: any ReplicationLog
    private let doorbell: ReplicationDoorbell
    private let softwareVersion: String
    private let logger: Logger
    public let status: ReplicationStatus
    private let password: Mutex<String?>
    /// Bumped when the password changes, so the next attempt reconnects with the new one.
    private let passwordGeneration = Atomic<Int>(0)
    private let lastPrune = Mutex<Date?>(nil)

    public init(
        configuration: ReplicationConfiguration, log: any ReplicationLog, doorbell: ReplicationDoorbell,
        softwareVersion: String, logger: Logger
    ) throws(ReplicationConfigurationError) {
        self.configuration = configuration
        self.log = log
        self.doorbell = doorbell
        self.softwareVersion = softwareVersion
        self.logger = logger
        password = Mutex(try configuration.readPassword())
        status = ReplicationStatus(hubID: configuration.hubID, server: configuration.redactedDescription, logger: logger)
    }

    /// Changes committed locally and not yet shipped.
    public func pendingCount() async throws -> Int {
        try await log.pendingChangeCount()
    }

    /// A reload's password (the file read again); takes effect on the next attempt.
    public func updatePassword(_ newPassword: String?) {
        let changed = password.withLock { current in
            defer { current = newPassword }
            return current != newPassword
        }
        guard changed else { return }
        passwordGeneration.add(1, ordering: .relaxed)
        logger.info("replication password reloaded")
        doorbell.ring()
    }

    public func run() async throws {
        logger.info("replication on", metadata: ["server": "\(configuration.redactedDescription)", "hub_id": "\(configuration.hubID)"])
        // Whatever waited from before this start goes first.
        doorbell.ring()
        try await cancelWhenGracefulShutdown {
            // Closed by its deinit when the loop ends.
            var session = Session()
            for await _ in self.doorbell.rings {
                try await self.drain(&session)
            }
        }
    }

    /// The connection and what it has done; dropped on any error.
    ///
    /// Why one connection of our own and not postgres-nio's PostgresClient pool: shipping is one transaction
    /// at a time in commit order, so a second connection would never be used; and the pool cannot keep the
    /// guarantees the outage tests need. A query on a connection whose channel is torn down never completes
    /// and ignores cancellation (postgres-nio 1.33.2), so its `withConnection` closure never returns and the
    /// pool's lease is never given back: each such hang would take a connection from a small pool for good,
    /// and with the pool empty every later batch waits. Here the deadline abandons the hung operation, the
    /// connection is closed and forgotten, and the next attempt opens a new one. The pool also connects in
    /// the background, away from the shipper, whose own connect is what reports the reason `status` shows
    /// (wrong password, unknown host, no TLS) and drives the capped backoff.
    struct Session: ~Copyable {
        var connection: PostgresConnection?
        var generation = -1
        var nextConnectionID = 1
        /// When the last batch was read, and how long after it the next may be
        /// (``ReplicationConfiguration/batchInterval``, or ``ReplicationConfiguration/busyBatchInterval``).
        var lastBatch: ContinuousClock.Instant?
        var interval: Duration = .zero

        mutating func close() {
            connection?.closeInBackground()
            connection = nil
        }

        deinit { connection?.closeInBackground() }
    }

    /// Ships until nothing is pending, retrying with backoff through failures.
    private func drain(_ session: inout Session) async throws {
        var delay = configuration.initialRetryDelay
        while true {
            try Task.checkCancellation()
            do {
                if let last = session.lastBatch {
                    let wait = session.interval - last.duration(to: .now)
                    if wait > .zero { try await Task.sleep(for: wait) }
                }
                session.lastBatch = .now
                // The batch first, so that the connection's liveness is checked right before it is used.
                let batch = try await log.pendingChanges(limit: configuration.batchSize)
                let busy = batch.changes.count >= configuration.busyBatchChanges
                session.interval = busy ? configuration.busyBatchInterval : configuration.batchInterval
                let connection = try await connect(&session)
                guard let through = batch.throughSequence else {
                    try await log.saveShippedMark()
                    try await withDeadline { try await self.touchHub(connection) }
                    status.pending(0)
                    try await pruneIfDue()
                    return
                }
                try await withDeadline { try await self.ship(batch.changes, on: connection) }
                let now = Date()
                try await log.markShipped(through: through, at: now)
                status.shipped(batch.changes.count, at: now)
                delay = configuration.initialRetryDelay
            } catch {
                if Task.isCancelled { throw CancellationError() }
                session.close()
                status.failed(Self.describe(error), retryIn: delay)
                if let pending = try? await log.pendingChangeCount() { status.pending(pending) }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, configuration.maximumRetryDelay)
            }
        }
    }

    private func connect(_ session: inout Session) async throws -> PostgresConnection {
        let generation = passwordGeneration.load(ordering: .relaxed)
        if let connection = session.connection, !connection.isClosed, session.generation == generation {
            return connection
        }
        session.close()
        let connectionConfiguration = try configuration.connectionConfiguration(password: password.withLock { $0 })
        let id = session.nextConnectionID
        session.nextConnectionID += 1
        let logger = self.logger
        // A connection that arrives after the deadline is closed, not dropped open.
        let connection = try await withOperationDeadline(configuration.operationTimeout, lateResult: { $0.closeInBackground() }) {
            try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: connectionConfiguration, id: id, logger: logger)
        }
        session.connection = connection
        session.generation = generation
        try await withDeadline {
            try await CentralSchema.migrate(connection, logger: logger)
            try await self.touchHub(connection)
        }
        status.connected()
        return connection
    }

    /// Runs `body`, failing it after ``ReplicationConfiguration/operationTimeout``: a connection whose server
    /// vanished (a half-open TCP connection, a lost reply) must not hold the backlog for ever.
    private func withDeadline<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withOperationDeadline(configuration.operationTimeout, body)
    }

    /// One transaction: every change of the batch (one upsert per table), and the hub's last_seen.
    private func ship(_ changes: [ReplicationChange], on connection: PostgresConnection) async throws {
        let hubID = configuration.hubID
        let logger = self.logger
        var workouts: [WorkoutRecord] = []
        var shares: [ShareRecord] = []
        for change in changes {
            switch change.record {
            case .workout(let workout): workouts.append(workout)
            case .share(let share): shares.append(share)
            }
        }
        let upserts = [CentralUpserts.workouts(workouts, hubID: hubID), CentralUpserts.shares(shares, hubID: hubID)]
        try await connection.inCentralTransaction(logger: logger) { connection in
            for upsert in upserts.compactMap({ $0 }) {
                try await connection.queryUnlessClosed(upsert, logger: logger)
            }
            try await self.touchHub(connection)
        }
    }

    private func touchHub(_ connection: PostgresConnection) async throws {
        try await connection.queryUnlessClosed("""
            INSERT INTO hubs (hub_id, last_seen, software_version) VALUES (\(configuration.hubID), \(Date()), \(softwareVersion))
            ON CONFLICT (hub_id) DO UPDATE SET last_seen = excluded.last_seen, software_version = excluded.software_version
            """, logger: logger)
    }

    /// Local retention, at most hourly and only when shipping has caught up.
    private func pruneIfDue() async throws {
        guard let retention = configuration.retention else { return }
        let now = Date()
        let due = lastPrune.withLock { last in
            guard last.map({ now.timeIntervalSince($0) >= 3600 }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        let cutoff = now.addingTimeInterval(-retention.inSeconds)
        let removed = try await log.pruneShipped(before: cutoff)
        if removed > 0 { logger.info("pruned shipped workouts from the local store", metadata: ["workouts": "\(removed)"]) }
    }

    /// The reason a person can act on; PSQLError's own description hides everything on purpose.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let code = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return "server: \(message)\(code)"
            }
            switch error.code {
            case .sslUnsupported:
                return "the server does not offer TLS, but sslmode requires it"
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
                // The underlying error is often a PSQLError again (the server's FATAL message on shutdown).
                let cause = error.underlying.map { describe($0) } ?? "the connection was closed"
                return cause.hasPrefix("connection failed: ") ? cause : "connection failed: \(cause)"
            case .authMechanismRequiresPassword:
                return "the server asks for a password and none is configured (replication.password_file)"
            default:
                return "\(error.code)\(error.underlying.map { ": \($0)" } ?? "")"
            }
        }
        if let error = error as? PostgresTransactionError {
            for inner in [error.beginError, error.closureError, error.commitError, error.rollbackError].compactMap({ $0 }) {
                return describe(inner)
            }
        }
        return String(describing: error)
    }
}
