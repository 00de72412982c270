import Foundation
import GRDB
import WorkoutEngine

/// The `replicationOutbox` table: what each commit wrote, in commit order, until the shipper has it in
/// the central database. Written inside the commit's own transaction, so it is exactly what was committed.
enum ReplicationOutbox {
    static let tableName = "replicationOutbox"

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

extension SQLiteWorkoutStore: ReplicationLog {
    public func pendingChanges(limit: Int) async throws -> ReplicationBatch {
        try await database.readOrUnavailable { db in
            let entries = try Row.fetchAll(db, sql: """
                SELECT sequence, kind, recordID FROM replicationOutbox WHERE shippedAt IS NULL ORDER BY sequence LIMIT ?
                """, arguments: [max(1, limit)])
            // A record changed twice in the batch ships once, in its newest state, at its last sequence.
            var changes: [ReplicationChange] = []
            var seen: [String: Int] = [:]
            for entry in entries {
                let sequence: Int64 = entry["sequence"]
                let kind: String = entry["kind"]
                let id: Int64 = entry["recordID"]
                let key = "\(kind):\(id)"
                if let index = seen[key] {
                    changes[index].sequence = sequence
                    continue
                }
                let record: ReplicationChange.Record
                switch ReplicationOutbox.Kind(rawValue: kind) {
                case .workout:
                    guard let row = try WorkoutRow.fetchOne(db, key: id) else { continue }
                    record = .workout(try row.record())
                case .share:
                    guard let row = try ShareRow.fetchOne(db, key: id) else { continue }
                    record = .share(try row.record())
                case nil:
                    continue
                }
                seen[key] = changes.count
                changes.append(ReplicationChange(sequence: sequence, record: record))
            }
            let through: Int64? = entries.last.map { $0["sequence"] }
            return ReplicationBatch(changes: changes.sorted { $0.sequence < $1.sequence }, throughSequence: through)
        }
    }

    public func markShipped(through sequence: Int64, at date: Date) async throws {
        try await database.writeOrUnavailable { db in
            try db.execute(
                sql: "UPDATE replicationOutbox SET shippedAt = ? WHERE shippedAt IS NULL AND sequence <= ?",
                arguments: [date.timeIntervalSince1970, sequence])
        }
    }

    public func pendingChangeCount() async throws -> Int {
        try await database.readOrUnavailable { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM replicationOutbox WHERE shippedAt IS NULL") ?? 0
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
                  AND NOT EXISTS (SELECT 1 FROM replicationOutbox o WHERE o.kind = 'share' AND o.recordID = share.id AND o.shippedAt IS NULL)
                """, arguments: [cutoff])
            try db.execute(sql: """
                DELETE FROM workout
                WHERE endedAt IS NOT NULL AND endedAt < ?
                  AND id < (SELECT MAX(id) FROM workout)
                  AND NOT EXISTS (SELECT 1 FROM replicationOutbox o WHERE o.kind = 'workout' AND o.recordID = workout.id AND o.shippedAt IS NULL)
                  AND NOT EXISTS (SELECT 1 FROM share s WHERE s.workoutID = workout.id)
                  AND NOT EXISTS (SELECT 1 FROM deviceSession d WHERE d.activeWorkoutID = workout.id OR d.lastEndedWorkoutID = workout.id)
                """, arguments: [cutoff])
            let removed = db.changesCount
            try db.execute(sql: "DELETE FROM replicationOutbox WHERE shippedAt IS NOT NULL AND shippedAt < ?", arguments: [cutoff])
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
