import Foundation
import Logging
import Metrics
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
/// and while idle only by the heartbeat's timer; while the server cannot be reached it retries with a capped backoff and
/// the backlog waits in SQLite. Up to ``ReplicationConfiguration/maximumConnections`` batches overlap, each
/// on a connection of its own from a small pool, and commit in order. Every
/// ``ReplicationConfiguration/heartbeatInterval``, between batches and on the same connections, it writes the hub's row
/// of `hubs` (``HubHeartbeat``).
///
/// Nothing it sends keeps state on the server from one transaction to the next (no SET, no session locks, no
/// temporary tables, no LISTEN, no named prepared statements: postgres-nio's queries use the unnamed statement), so it
/// runs through a pooler in transaction mode.
public final class ReplicationShipper: Service, Sendable {
    private let configuration: ReplicationConfiguration
    private let log: any ReplicationLog
    private let doorbell: ReplicationDoorbell
    private let softwareVersion: String
    private let logger: Logger
    public let status: ReplicationStatus
    private let password: Mutex<String?>
    /// Bumped when the next attempt must open new connections.
    ///
    /// When the password changes, so it reconnects with the new one; with several hosts, when shipping fails, so it
    /// walks the host list from the first again.
    private let connectionGeneration = Atomic<Int>(0)
    /// The host the pool's connections of a generation use.
    ///
    /// The first that qualified when the generation began. So that every connection of the pool talks to the same server (two servers taking writes at once is a split
    /// brain; the batches must not be spread over both).
    private let hostInUse = Mutex<(generation: Int, index: Int)?>(nil)
    private let lastPrune = Mutex<Date?>(nil)
    private let activity: @Sendable () async -> HubActivity
    private let startedAt: Date
    /// Set by the heartbeat's timer (and at start); the shipper writes the heartbeat at its next turn.
    private let heartbeatDue = Atomic<Bool>(true)

    public init(
        configuration: ReplicationConfiguration,
        log: any ReplicationLog,
        doorbell: ReplicationDoorbell,
        softwareVersion: String,
        logger: Logger,
        metrics: any MetricsFactory = MetricsSystem.factory,
        startedAt: Date = Date(),
        activity: @escaping @Sendable () async -> HubActivity = { HubActivity() }
    ) throws(ReplicationConfigurationError) {
        self.configuration = configuration
        self.startedAt = startedAt
        self.activity = activity
        self.log = log
        self.doorbell = doorbell
        self.softwareVersion = softwareVersion
        self.logger = logger
        password = Mutex(try configuration.readPassword())
        status = ReplicationStatus(
            hubID: configuration.hubID,
            server: configuration.redactedDescription,
            serverIdentity: configuration.serverIdentity.rawValue,
            maxConnections: configuration.maximumConnections,
            logger: logger,
            metrics: metrics
        )
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
        connectionGeneration.add(1, ordering: .relaxed)
        logger.info("replication password reloaded")
        doorbell.ring()
    }

    public func run() async throws {
        logger.info(
            "replication on",
            metadata: [
                "server": "\(configuration.redactedDescription)", "hub_id": "\(configuration.hubID)",
                "max_connections": "\(configuration.maximumConnections)",
                "server_identity": "\(configuration.serverIdentity.rawValue)",
                "heartbeat_interval_s": "\(configuration.heartbeatInterval.components.seconds)",
            ]
        )
        for warning in configuration.startWarnings { logger.warning("\(warning)") }
        let pool = CentralConnectionPool(
            maximumConnections: configuration.maximumConnections,
            currentGeneration: { [self] in connectionGeneration.load(ordering: .relaxed) },
            openCountChanged: { [status] in status.connectionsOpen($0) },
            open: { [self] id in try await self.openConnection(id: id) }
        )
        // Whatever waited from before this start goes first, after the first heartbeat.
        doorbell.ring()
        let ticker = Task { [self] in
            while (try? await Task.sleep(for: configuration.heartbeatInterval)) != nil {
                heartbeatDue.store(true, ordering: .relaxed)
                doorbell.ring()
            }
        }
        defer { ticker.cancel() }
        do {
            try await cancelWhenGracefulShutdown {
                var pipeline = Pipeline()
                do {
                    for await _ in self.doorbell.rings {
                        try await self.drain(pool, &pipeline)
                    }
                } catch {
                    // Unfinished batches are not marked shipped; the next start sends them again.
                    await pipeline.abandon()
                    throw error
                }
                await pipeline.abandon()
            }
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }

    /// The batches on their way and how the next one is paced; kept from one doorbell ring to the next.
    struct Pipeline {
        /// Oldest first; each commits only after the one before it.
        var inFlight: [BatchInFlight] = []
        /// The newest sequence a batch in flight covers: the next batch is read from after it.
        var readThrough: Int64?
        /// When the last batch was read.
        var lastBatch: ContinuousClock.Instant?
        /// Whether a batch has shipped or the pool was filled since this start.
        var warmedUp = false
        /// Whether the last batch read was a large one (``ReplicationConfiguration/busyBatchChanges``).
        var busy = false
        /// Awaits batches in flight, oldest first.
        ///
        /// Every one that has ended, and more until at most `count` are left. A batch's failure is thrown here. Returns
        /// whether any batch was awaited.
        mutating func collect(leaving count: Int) async throws -> Bool {
            var collected = false
            while let oldest = inFlight.first, oldest.hasEnded || inFlight.count > count {
                inFlight.removeFirst()
                try await oldest.task.value
                warmedUp = true
                collected = true
            }
            return collected
        }

        /// Waits until the next batch may be read.
        ///
        /// ``ReplicationConfiguration/batchInterval`` after the last one, or
        /// ``ReplicationConfiguration/busyBatchInterval`` after a large one.
        mutating func pace(_ configuration: ReplicationConfiguration) async throws {
            if let last = lastBatch {
                let interval = busy ? configuration.busyBatchInterval : configuration.batchInterval
                let wait = interval - last.duration(to: .now)
                if wait > .zero { try await Task.sleep(for: wait) }
            }
            lastBatch = .now
        }

        /// Cancels every batch in flight and waits for them.
        ///
        /// Cancelled, they end at once, each closing its connection, so nothing of theirs commits after what is shipped
        /// next.
        mutating func abandon() async {
            for batch in inFlight { batch.task.cancel() }
            for batch in inFlight { _ = try? await batch.task.value }
            inFlight.removeAll()
            readThrough = nil
        }
    }

    /// A batch's task, whether it has ended (read without waiting for it), and when its upserts are done.
    /// It rings the doorbell when it ends, so the shipper, waiting for new commits, also wakes for a batch done.
    final class BatchInFlight: Sendable {
        let task: Task<Void, any Error>
        /// Finished once the batch's upserts are done, or with its failure.
        ///
        /// Once the upserts are done, the batch's rows are locked in its transaction.
        let upserted = OneShot<Void>()
        private let ended = Flag()

        final class Flag: Sendable {
            let value = Atomic<Bool>(false)
        }

        struct EndedError: Error {}

        init(
            _ body: @escaping @Sendable (_ upserted: OneShot<Void>) async throws -> Void,
            whenEnded: @escaping @Sendable () -> Void
        ) {
            let (upserted, ended) = (self.upserted, self.ended)
            task = Task {
                defer {
                    upserted.finish(.failure(EndedError()))  // only if the body did not
                    ended.value.store(true, ordering: .releasing)
                    whenEnded()
                }
                try await body(upserted)
            }
        }

        var hasEnded: Bool { ended.value.load(ordering: .acquiring) }
    }

    /// Ships what is pending, retrying with backoff through failures, until nothing is left to read.
    ///
    /// Batches overlap, one per connection of the pool, unless they are large: while batch N commits, batch N+1
    /// is read and its upserts run on a second connection; N+1 commits only after N has
    /// (``ship(_:through:after:upserted:on:_:)``), so
    /// the server sees the batches in commit order and the shipped mark only ever moves forward. Should one
    /// fail, every batch after it fails before its commit too, and shipping starts again from the mark.
    /// Returns with batches still in flight when nothing new is committed: the next ring (a commit, or a
    /// batch that ended) brings it back.
    private func drain(_ pool: CentralConnectionPool, _ pipeline: inout Pipeline) async throws {
        var delay = configuration.initialRetryDelay
        while true {
            do {
                try Task.checkCancellation()
                // Large batches go one at a time, each read once the one before is in: the devices commit flat
                // out, a second transaction beside the first would only take CPU and disk from their commits,
                // and a batch read early would be a smaller one (more transactions for the same rows).
                let leaving = pipeline.busy ? 0 : configuration.maximumConnections - 1
                if try await pipeline.collect(leaving: leaving) { delay = configuration.initialRetryDelay }
                if heartbeatDue.exchange(false, ordering: .relaxed) {
                    do {
                        // Between batches: the hub's row is not locked by a batch of its own then.
                        _ = try await pipeline.collect(leaving: 0)
                        try await heartbeat(pool)
                    } catch {
                        heartbeatDue.store(true, ordering: .relaxed)
                        throw error
                    }
                }
                try await pipeline.pace(configuration)
                let batch = try await log.pendingChanges(after: pipeline.readThrough, limit: configuration.batchSize)
                pipeline.busy = batch.changes.count >= configuration.busyBatchChanges
                if pipeline.busy, try await pipeline.collect(leaving: 0) { delay = configuration.initialRetryDelay }
                guard let through = batch.throughSequence else {
                    guard pipeline.inFlight.isEmpty else { return }
                    pipeline.readThrough = nil
                    try await caughtUp(pool, &pipeline)
                    return
                }
                // Leased here, in order, so a batch never waits for a connection a later one holds.
                let lease = try await pool.lease()
                let previous = pipeline.inFlight.last
                pipeline.inFlight.append(
                    BatchInFlight(
                        { upserted in
                            try await self.ship(
                                batch,
                                through: through,
                                after: previous,
                                upserted: upserted,
                                on: lease,
                                pool
                            )
                        },
                        whenEnded: { [doorbell] in doorbell.ring() }
                    )
                )
                pipeline.readThrough = through
            } catch {
                await pipeline.abandon()
                if Task.isCancelled { throw CancellationError() }
                if configuration.endpoints.count > 1 {
                    // The server may be gone or demoted (a write refused as read-only, SQLSTATE 25006): idle
                    // connections to it are dropped and the next one starts from the first host again.
                    connectionGeneration.add(1, ordering: .relaxed)
                }
                status.failed(Self.describe(error), retryIn: delay)
                if let pending = try? await log.pendingChangeCount() { status.pending(pending) }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, configuration.maximumRetryDelay)
            }
        }
    }

    /// Nothing left: the mark is written, and the pool filled if no batch has shipped yet.
    ///
    /// The pool keeps its connections open for the next batches: opening one again costs the server a process and, at a
    /// distance, a dozen round trips (start-up, authentication, the schema check) that the next batch would wait for.
    private func caughtUp(_ pool: CentralConnectionPool, _ pipeline: inout Pipeline) async throws {
        try await log.saveShippedMark()
        if !pipeline.warmedUp {
            try await pool.fill()
            pipeline.warmedUp = true
        }
        status.pending(0)
        try await pruneIfDue()
    }

    /// The hub's row of `hubs`, in a statement of its own on a connection of the pool.
    ///
    /// At start (so a hub with nothing to ship is listed at once) and every heartbeat interval.
    private func heartbeat(_ pool: CentralConnectionPool) async throws {
        let backlog = try await log.pendingChangeCount()
        status.pending(backlog)
        let failure = status.latestFailure
        let beat = HubHeartbeat(
            hubID: configuration.hubID,
            name: configuration.hubName,
            softwareVersion: softwareVersion,
            architecture: HubHeartbeat.machineArchitecture,
            startedAt: startedAt,
            intervalSeconds: Int(configuration.heartbeatInterval.components.seconds),
            activity: await activity(),
            backlog: backlog,
            lastError: failure.map {
                HubHeartbeat.redacted($0.reason, at: $0.at, password: password.withLock { $0 })
            }
        )
        let lease = try await pool.lease()
        do {
            _ = try await withDeadline("the heartbeat") {
                try await lease.connection.queryUnlessClosed(beat.query, logger: self.logger)
            }
        } catch {
            await pool.release(lease, reusable: false)
            throw error
        }
        await pool.release(lease, reusable: true)
    }

    /// A new connection, migrated, to a host that qualifies.
    ///
    /// See ``ReplicationConfiguration/targetSessionAttributes``. The hosts are tried in order, unless this generation already has its host (``hostInUse``): then that one only.
    /// What fails here (wrong password, unknown host, no TLS, a standby, a newer schema) is the reason `status` shows;
    /// with several hosts, each one's.
    private func openConnection(id: Int) async throws -> PostgresConnection {
        let generation = connectionGeneration.load(ordering: .relaxed)
        let endpoints = configuration.endpoints
        let candidates: [Int] =
            hostInUse.withLock { current in
                current.flatMap { $0.generation == generation ? [$0.index] : nil }
            } ?? Array(endpoints.indices)
        var failures: [(host: String, reason: String)] = []
        for index in candidates {
            let endpoint = endpoints[index]
            do {
                let connection = try await openConnection(id: id, to: endpoint)
                hostInUse.withLock { $0 = (generation, index) }
                status.connected(to: endpoint.description)
                return connection
            } catch {
                if Task.isCancelled || endpoints.count == 1 { throw error }
                failures.append((endpoint.description, Self.describe(error)))
            }
        }
        if failures.count == 1, let failure = failures.first {
            throw HostFailure(host: failure.host, reason: failure.reason)
        }
        throw NoUsableHostError(failures: failures, needsWrites: configuration.targetSessionAttributes == .readWrite)
    }

    /// The host `lease`'s connection went to, when its generation's host is known.
    private func host(of lease: CentralConnectionPool.Lease) -> String? {
        let index = hostInUse.withLock { current in
            current.flatMap { $0.generation == lease.generation ? $0.index : nil }
        }
        return index.map { configuration.endpoints[$0].description }
    }

    /// One host's connection failed, the host named with the reason.
    struct HostFailure: Error, CustomStringConvertible {
        var host: String
        var reason: String
        var description: String { "\(host): \(reason)" }
    }

    /// A new connection to `endpoint`, checked to take writes when it must, migrated.
    private func openConnection(
        id: Int,
        to endpoint: ReplicationConfiguration.Endpoint
    ) async throws
        -> PostgresConnection
    {
        let password = self.password.withLock { $0 }
        let configuration = self.configuration
        let logger = self.logger
        // A connection that arrives after the deadline is closed, not dropped open.
        let closeLate: @Sendable (PostgresConnection) -> Void = { $0.closeInBackground() }
        let connection = try await withOperationDeadline(
            configuration.operationTimeout,
            waitingFor: "connecting to \(endpoint)",
            lateResult: closeLate
        ) {
            try await configuration.connect(to: endpoint, password: password, id: id, logger: logger)
        }
        do {
            if configuration.targetSessionAttributes == .readWrite {
                // Before the schema check, which writes: a standby is passed over, not an error to retry on.
                let writable = try await withDeadline("the read-write check") {
                    try await connection.acceptsWrites(logger: logger)
                }
                guard writable else { throw ReadOnlyServerError() }
            }
            try await withDeadline("the schema check") { try await CentralSchema.migrate(connection, logger: logger) }
        } catch {
            connection.closeInBackground()
            throw error
        }
        return connection
    }

    /// Runs `body`, failing it after ``ReplicationConfiguration/operationTimeout``.
    ///
    /// A connection whose server vanished (a half-open TCP connection, a lost reply) must not hold the backlog for
    /// ever.
    private func withDeadline<T: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withOperationDeadline(configuration.operationTimeout, waitingFor: operation, body)
    }

    /// One central transaction for the batch.
    ///
    /// Its upserts (one per table) once `previous`'s are done, then, once `previous` has committed, the hub's last_seen
    /// and COMMIT; then the batch is marked shipped locally. On any error the connection is closed, which makes the
    /// server abort the transaction.
    ///
    /// Why the upserts wait for the previous batch's: both may write the same row (a workout started in one,
    /// ended in the next). Were this batch's upsert first to lock it, the previous one's would wait on the
    /// server for this transaction, while this one waits here for the previous to commit: a deadlock the
    /// server cannot see. In this order this one may wait for the previous one's locks, never the other way.
    private func ship(
        _ batch: ReplicationBatch,
        through: Int64,
        after previous: BatchInFlight?,
        upserted: OneShot<Void>,
        on lease: CentralConnectionPool.Lease,
        _ pool: CentralConnectionPool
    ) async throws {
        let hubID = configuration.hubID
        let logger = self.logger
        var workouts: [WorkoutRecord] = []
        var shares: [ShareRecord] = []
        for change in batch.changes {
            switch change.record {
            case .workout(let workout): workouts.append(workout)
            case .share(let share): shares.append(share)
            }
        }
        let upserts = [CentralUpserts.workouts(workouts, hubID: hubID), CentralUpserts.shares(shares, hubID: hubID)]
            .compactMap { $0 }
        let connection = lease.connection
        do {
            try await previous?.upserted.value()
            try await withDeadline("the batch's upserts") {
                try await connection.queryUnlessClosed("BEGIN", logger: logger)
                for upsert in upserts {
                    try await connection.queryUnlessClosed(upsert, logger: logger)
                }
            }
            upserted.finish(.success(()))
            // Commit order. The hub's row comes after the wait: every batch writes it, and a later batch
            // holding it would make the one before wait on it.
            try await previous?.task.value
            try await withDeadline("the commit") {
                try await self.touchHub(connection)
                try await connection.queryUnlessClosed("COMMIT", logger: logger)
            }
        } catch {
            await pool.release(lease, reusable: false)
            throw error
        }
        await pool.release(lease, reusable: true)
        let now = Date()
        try await log.markShipped(through: through, at: now)
        status.connected(to: host(of: lease))
        status.shipped(batch.changes.count, at: now)
    }

    /// The hub's `last_seen` with each batch, on the server's clock as the heartbeat's (``HubHeartbeat``).
    private func touchHub(_ connection: PostgresConnection) async throws {
        try await connection.queryUnlessClosed(
            """
            INSERT INTO hubs (hub_id, last_seen, software_version) VALUES (\(configuration.hubID), clock_timestamp(), \(softwareVersion))
            ON CONFLICT (hub_id) DO UPDATE SET last_seen = excluded.last_seen, software_version = excluded.software_version
            """,
            logger: logger
        )
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
        if removed > 0 {
            logger.info("pruned shipped workouts from the local store", metadata: ["workouts": "\(removed)"])
        }
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
                return
                    "the server asks for a password and none is configured (replication.password_credential or replication.password_file)"
            default:
                return "\(error.code)\(error.underlying.map { ": \($0)" } ?? "")"
            }
        }
        if let error = error as? PostgresTransactionError {
            for inner in [error.beginError, error.closureError, error.commitError, error.rollbackError].compactMap({
                $0
            }) {
                return describe(inner)
            }
        }
        return String(describing: error)
    }
}
