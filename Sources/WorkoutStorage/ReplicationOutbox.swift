import Foundation
import GRDB
import WorkoutEngine

/// The `replicationOutbox` table: what each commit wrote, in commit order, until the shipper has it in
/// the central database. Written inside the commit's own transaction, so it is exactly what was committed.
enum ReplicationOutbox {
    static let tableName = "replicationOutbox"
    /// One row: every outbox entry up to `throughSequence` is in the central database.
    static let watermarkTableName = "replicationShipped"
    /// The watermark, for a query's WHERE clause.
    static let shippedThrough = "(SELECT throughSequence FROM replicationShipped WHERE id = 1)"

    enum Kind: String {
        case workout
        case share
    }

    static func append(_ rows: BatchRows, in db: Database) throws {
        let now = Date().timeIntervalSince1970
        let insert = try db.cachedStatement(sql: "INSERT INTO replicationOutbox (kind, recordID, committedAt) VALUES (?, ?, ?)")
        for workout in rows.workouts { try insert.execute(arguments: [Kind.workout.rawValue, workout.id, now]) }
        for share in rows.shares { try insert.execute(arguments: [Kind.share.rawValue, share.id, now]) }
    }
}

extension ReplicationOutbox {
    /// At open: keeps the outbox complete across periods without replication, so history committed while
    /// replication was off (or before this version) is shipped too, exactly once centrally.
    ///
    /// With replication on, a store not known to be complete queues every workout and share it holds, in id
    /// order, in one transaction with the mark that it is complete: a crash before the mark repeats the whole
    /// step, after it nothing repeats. Records that were already shipped go again; the central upserts are
    /// keyed by the primary keys and never move a row back, so that changes nothing there. With replication
    /// off the mark is cleared, since the commits that follow write no outbox entries. Returns the records queued.
    @discardableResult
    static func backFill(replicating: Bool, in db: Database) throws -> Int {
        let complete = try Bool.fetchOne(db, sql: "SELECT complete FROM replicationShipped WHERE id = 1") ?? false
        guard replicating else {
            if complete { try db.execute(sql: "UPDATE replicationShipped SET complete = 0 WHERE id = 1") }
            return 0
        }
        guard !complete else { return 0 }
        let now = Date().timeIntervalSince1970
        try db.execute(sql: """
            INSERT INTO replicationOutbox (kind, recordID, committedAt) SELECT ?, id, ? FROM workout ORDER BY id
            """, arguments: [Kind.workout.rawValue, now])
        var queued = db.changesCount
        try db.execute(sql: """
            INSERT INTO replicationOutbox (kind, recordID, committedAt) SELECT ?, id, ? FROM share ORDER BY id
            """, arguments: [Kind.share.rawValue, now])
        queued += db.changesCount
        try db.execute(sql: "UPDATE replicationShipped SET complete = 1 WHERE id = 1")
        return queued
    }
}

extension SQLiteWorkoutStore: ReplicationLog {
    private struct Key: Hashable {
        var kind: ReplicationOutbox.Kind
        var id: Int64
    }

    public func pendingChanges(limit: Int) async throws -> ReplicationBatch {
        try await database.readOrUnavailable { db in
            let entries = try Row.fetchAll(db, sql: """
                SELECT sequence, kind, recordID FROM replicationOutbox WHERE sequence > \(ReplicationOutbox.shippedThrough)
                ORDER BY sequence LIMIT ?
                """, arguments: [max(1, limit)])
            // A record changed twice in the batch ships once, in its newest state, at its last sequence.
            var newest: [Key: Int64] = [:]
            for entry in entries {
                guard let kind = ReplicationOutbox.Kind(rawValue: entry["kind"]) else { continue }
                newest[Key(kind: kind, id: entry["recordID"])] = entry["sequence"]
            }
            // Two queries for the batch's records, not one per entry: this runs beside the device path.
            let workoutIDs = newest.keys.filter { $0.kind == .workout }.map(\.id)
            let shareIDs = newest.keys.filter { $0.kind == .share }.map(\.id)
            var changes: [ReplicationChange] = []
            changes.reserveCapacity(newest.count)
            for row in try WorkoutRow.fetchAll(db, keys: workoutIDs) {
                guard let sequence = newest[Key(kind: .workout, id: row.id)] else { continue }
                changes.append(ReplicationChange(sequence: sequence, record: .workout(try row.record())))
            }
            for row in try ShareRow.fetchAll(db, keys: shareIDs) {
                guard let sequence = newest[Key(kind: .share, id: row.id)] else { continue }
                changes.append(ReplicationChange(sequence: sequence, record: .share(try row.record())))
            }
            let through: Int64? = entries.last.map { $0["sequence"] }
            return ReplicationBatch(changes: changes.sorted { $0.sequence < $1.sequence }, throughSequence: through)
        }
    }

    public func markShipped(through sequence: Int64, at date: Date) async throws {
        try await database.writeOrUnavailable { db in
            try db.execute(
                sql: "UPDATE replicationShipped SET throughSequence = MAX(throughSequence, ?), shippedAt = ? WHERE id = 1",
                arguments: [sequence, date.timeIntervalSince1970])
        }
    }

    public func pendingChangeCount() async throws -> Int {
        try await database.readOrUnavailable { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM replicationOutbox WHERE sequence > \(ReplicationOutbox.shippedThrough)") ?? 0
        }
    }

    public func pruneShipped(before date: Date) async throws -> Int {
        try await database.writeOrUnavailable { db in
            let cutoff = date.timeIntervalSince1970
            // Anything with an unshipped outbox entry stays; so do the newest ids (the id watermark is
            // MAX(id): removing them would let a new workout reuse an id the central database already has),
            // shares still waiting for delivery, and workouts a session or a share still refers to.
            try db.execute(sql: """
                DELETE FROM share
                WHERE status != 'pending' AND queuedAt < ?
                  AND id < (SELECT MAX(id) FROM share)
                  AND NOT EXISTS (SELECT 1 FROM replicationOutbox o WHERE o.kind = 'share' AND o.recordID = share.id AND o.sequence > \(ReplicationOutbox.shippedThrough))
                """, arguments: [cutoff])
            try db.execute(sql: """
                DELETE FROM workout
                WHERE endedAt IS NOT NULL AND endedAt < ?
                  AND id < (SELECT MAX(id) FROM workout)
                  AND NOT EXISTS (SELECT 1 FROM replicationOutbox o WHERE o.kind = 'workout' AND o.recordID = workout.id AND o.sequence > \(ReplicationOutbox.shippedThrough))
                  AND NOT EXISTS (SELECT 1 FROM share s WHERE s.workoutID = workout.id)
                  AND NOT EXISTS (SELECT 1 FROM deviceSession d WHERE d.activeWorkoutID = workout.id OR d.lastEndedWorkoutID = workout.id)
                """, arguments: [cutoff])
            let removed = db.changesCount
            // committedAt, not the time of shipping: an entry shipped is old enough when it was committed before the cutoff.
            try db.execute(
                sql: "DELETE FROM replicationOutbox WHERE sequence <= \(ReplicationOutbox.shippedThrough) AND committedAt < ?",
                arguments: [cutoff])
            return removed
        }
    }
}

extension DatabaseWriter {
    fileprivate func readOrUnavailable<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await read(body) } catch { throw StorageUnavailableError(reason: SQLiteWorkoutStore.describe(error)) }
    }

    fileprivate func writeOrUnavailable<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await write(body) } catch { throw StorageUnavailableError(reason: SQLiteWorkoutStore.describe(error)) }
    }
}
