import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// A device's batch made durable: one write transaction, in place or on GRDB's writer queue.
extension SQLiteWorkoutStore {
    public func commit(_ batch: StoreBatch) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enqueueCommit(batch) { continuation.resume(with: $0) }
        }
    }

    /// Queued on GRDB's writer queue, which runs its accesses one at a time in order.
    ///
    /// A device's loop meanwhile steps its next batch, and ``CommitPipeline`` queues that one's commit from this
    /// completion, on the writer's thread, which goes on with it without waking the loop first.
    public func enqueueCommit(_ batch: StoreBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writesUnderway.add(1, ordering: .relaxed)
        let database = self.database
        database.asyncWriteWithoutTransaction { db in
            // Prepared here: the commit queued before it has set the device's ring cursor by now.
            let commit = PreparedCommit(batch, in: self, database: database)
            let result = Result { () throws -> Void in
                let outcome = try db.commitOrUnavailable(commit.write, then: commit.measure)
                self.committed(commit, outcome)
            }
            self.writesUnderway.subtract(1, ordering: .relaxed)
            completion(result)
        }
    }

    /// The same transaction as ``commit(_:)``, on the calling thread.
    ///
    /// GRDB's writer queue runs a synchronous access in place when it is idle (libdispatch), so a lone command's commit
    /// costs no hop to the writer's thread and back. The caller's thread waits for the sync, so a session asks for it
    /// only when the device waits for it too (single flight) and ``writerIsIdle``; a write that starts meanwhile delays
    /// it by one transaction.
    public func commitImmediately(_ batch: StoreBatch) throws {
        let commit = PreparedCommit(batch, in: self)
        writesUnderway.add(1, ordering: .relaxed)
        defer { writesUnderway.subtract(1, ordering: .relaxed) }
        let outcome: PreparedCommit.Outcome
        do {
            outcome = try commit.database.writeWithoutTransaction { db in
                try db.commitOrUnavailable(commit.write, then: commit.measure)
            }
        } catch let error as StorageUnavailableError {
            throw error
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
        committed(commit, outcome)
    }

    public var immediateCommitWaitsForDisk: Bool { true }

    public var writerIsIdle: Bool { writesUnderway.load(ordering: .relaxed) == 0 }

    /// What a commit reads from the store before its transaction.
    ///
    /// One database for the whole commit (a reopen may replace the store's meanwhile), the device's ring cursor, and
    /// the shipper's mark.
    struct PreparedCommit: Sendable {
        let batch: StoreBatch
        let window: Int
        let database: any DatabaseWriter
        let knownCursor: ReplyRing.Cursor?
        let replicated: Bool
        /// The shipper's mark rides along: one row more in a transaction that commits anyway.
        let mark: ReplicationOutbox.ShippedMark?
        let sizeWatch: DatabaseSizeWatch
        let budget: Int64

        init(_ batch: StoreBatch, in store: SQLiteWorkoutStore, database: (any DatabaseWriter)? = nil) {
            self.batch = batch
            window = store.replyWindow
            let database = database ?? store.database
            self.database = database
            knownCursor = store.ringCursors.withLock { $0.cursor(of: batch.device.rawValue, in: database) }
            replicated = store.replicationDoorbell != nil
            mark = replicated ? store.unsavedShippedMark.withLock({ $0 }) : nil
            sizeWatch = store.sizeWatch
            budget = store.maximumBytes.load(ordering: .relaxed)
        }

        struct Outcome: Sendable {
            /// The bytes in use, when the commit measured them (``DatabaseSizeWatch``).
            var size: Int64?
            var cursor: ReplyRing.Cursor
            var recorded: Bool
        }

        func write(in db: Database) throws -> Outcome {
            let rows = try BatchRows(batch, window: window)
            // Cached statements: compiled once per connection, not once per row.
            if !rows.workouts.isEmpty {
                var upsertWorkout = BoundStatement(try db.cachedStatement(sql: WorkoutRow.upsertSQL))
                for workout in rows.workouts {
                    workout.bind(to: &upsertWorkout)
                    try upsertWorkout.run(in: db)
                }
            }
            if !rows.clockMarks.isEmpty {
                let upsertMark = try db.cachedStatement(sql: WorkoutClockRow.upsertSQL)
                for mark in rows.clockMarks { try upsertMark.execute(arguments: mark.statementArguments) }
            }
            if !rows.shares.isEmpty {
                var insertShare = BoundStatement(try db.cachedStatement(sql: ShareRow.insertSQL))
                for share in rows.shares {
                    share.bind(to: &insertShare)
                    try insertShare.run(in: db)
                }
            }
            let device = batch.device.rawValue
            let cursor = try ReplyRing.write(
                rows.ring,
                at: knownCursor ?? ReplyRing.cursor(device: device, window: window, in: db),
                window: window,
                in: db
            )
            if replicated { try ReplicationOutbox.append(rows, in: db) }
            if let mark { try ReplicationOutbox.save(mark, in: db) }
            return Outcome(size: nil, cursor: cursor, recorded: !rows.workouts.isEmpty || !rows.shares.isEmpty)
        }

        /// After the transaction committed, on the writer connection: its WAL frames are counted by now.
        func measure(in db: Database, _ outcome: inout Outcome) {
            outcome.size = sizeWatch.bytesInUseIfNeeded(db, budget: budget)
        }
    }

    func committed(_ commit: PreparedCommit, _ outcome: PreparedCommit.Outcome) {
        ringCursors.withLock { $0.set(outcome.cursor, of: commit.batch.device.rawValue, in: commit.database) }
        if let size = outcome.size { recordSize(size) }
        if let mark = commit.mark { shippedMarkSaved(mark) }
        if let replicationDoorbell, outcome.recorded { replicationDoorbell.ring() }
    }
}

/// A ``StoreBatch`` turned into rows before the transaction starts, so only SQL runs inside it.
struct BatchRows: Sendable {
    var workouts: [WorkoutRow]
    var shares: [ShareRow]
    var ring: ReplyRing.Batch
    /// The clock marks of the batch's marked workouts (none while the clock is synchronised).
    var clockMarks: [WorkoutClockRow]

    init(_ batch: StoreBatch, window: Int) throws {
        // A workout started and ended in one batch (pipelined) is one row write, its last state: the upsert
        // overwrites every column, so the earlier write would change nothing that stays.
        // A lone workout (single flight) needs no such search, nor its dictionary.
        var newest: [Int64: Int] = [:]
        if batch.workouts.count > 1 {
            for (index, workout) in batch.workouts.enumerated() { newest[workout.id] = index }
        }
        workouts = []
        workouts.reserveCapacity(batch.workouts.count)
        for (index, workout) in batch.workouts.enumerated() where newest.isEmpty || newest[workout.id] == index {
            workouts.append(try WorkoutRow(workout))
        }
        clockMarks = batch.workouts.compactMap(WorkoutClockRow.init)
        shares = try batch.shares.map(ShareRow.init)
        ring = ReplyRing.Batch(batch, window: window)
    }
}
