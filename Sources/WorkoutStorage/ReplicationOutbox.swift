import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// The `replicationOutbox` table.
///
/// What each commit wrote, in commit order, until the shipper has it in the central database. Written inside the
/// commit's own transaction, so it is exactly what was committed.
enum ReplicationOutbox {
    static let tableName = "replicationOutbox"
    /// One row: every outbox entry up to `throughSequence` is in the central database.
    static let watermarkTableName = "replicationShipped"
    /// The watermark, for a query's WHERE clause.
    static let shippedThrough = "(SELECT throughSequence FROM replicationShipped WHERE id = 1)"
    /// The watermark or the shipper's mark not yet written, whichever is further.
    ///
    /// The mark is bound as the one argument.
    static let shippedThroughOrUnsaved = "MAX(\(shippedThrough), ?)"

    enum Kind: String {
        case workout
        case share
    }

    /// How far the shipper has shipped, and when.
    struct ShippedMark: Equatable {
        var sequence: Int64
        var date: Date
    }

    static func save(_ mark: ShippedMark, in db: Database) throws {
        try db.cachedStatement(
            sql: "UPDATE replicationShipped SET throughSequence = MAX(throughSequence, ?), shippedAt = ? WHERE id = 1"
        )
        .execute(arguments: [mark.sequence, mark.date.timeIntervalSince1970])
    }

    /// One statement per kind, the ids as a JSON array (`json_each` keeps their order), not one per record.
    ///
    /// A pipelined commit writes a few hundred records, and each statement's own cost in GRDB and SQLite (its
    /// arguments, binding, stepping, resetting) is paid by the device path. With the server unreachable (the outbox
    /// written, nothing shipped), a statement per record cost pipelined throughput several times what one per kind
    /// costs (docs/decisions/0010-replication-batching.md).
    static func append(_ rows: BatchRows, in db: Database) throws {
        let now = Date().timeIntervalSince1970
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO replicationOutbox (kind, recordID, committedAt) SELECT ?, value, ? FROM json_each(?) ORDER BY key
                """
        )
        // A workout started and ended in one commit is one row of the batch (``BatchRows``), so one entry: the
        // shipper ships a record's newest state.
        let workoutIDs = rows.workouts.map(\.id)
        for (kind, ids) in [(Kind.workout, workoutIDs), (Kind.share, rows.shares.map(\.id))] where !ids.isEmpty {
            try insert.execute(arguments: [kind.rawValue, now, "[" + ids.map(String.init).joined(separator: ",") + "]"])
        }
    }
}

extension ReplicationOutbox {
    /// At open: keeps the outbox complete across periods without replication.
    ///
    /// So history committed while replication was off (or before this version) is shipped too, exactly once centrally.
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
        try db.execute(
            sql: """
                INSERT INTO replicationOutbox (kind, recordID, committedAt) SELECT ?, id, ? FROM workout ORDER BY id
                """,
            arguments: [Kind.workout.rawValue, now]
        )
        var queued = db.changesCount
        try db.execute(
            sql: """
                INSERT INTO replicationOutbox (kind, recordID, committedAt) SELECT ?, id, ? FROM share ORDER BY id
                """,
            arguments: [Kind.share.rawValue, now]
        )
        queued += db.changesCount
        try db.execute(sql: "UPDATE replicationShipped SET complete = 1 WHERE id = 1")
        return queued
    }
}

extension ReplicationOutbox {
    /// A record from the columns the central tables have, read straight from a row of pending changes.
    ///
    /// The row is one of ``SQLiteWorkoutStore/pendingChanges(limit:)``, read by position, after the sequence in column
    /// 0. Decoding whole records (GRDB's Codable rows, a JSONDecoder for every command id) was most of what a batch
    /// cost the hub's CPU, which the device path needs; the central database keeps no command ids or delivery state.
    static func workout(_ row: Row) -> WorkoutRecord {
        let endedAt: Double? = row[7]
        var record = WorkoutRecord(
            id: row[1],
            device: DeviceIdentity(row[2] as String),
            workout: Workout(location: row[3], date: Date(timeIntervalSince1970: row[4]), intensityLevel: row[5]),
            startedAt: Date(timeIntervalSince1970: row[6]),
            endedAt: endedAt.map(Date.init(timeIntervalSince1970:))
        )
        // Column 8, the clock mark (LEFT JOIN workoutClock): an unknown one is still a mark.
        if let mark: String = row[8] { record.clockMark = WorkoutClockMark(rawValue: mark) ?? .unsynchronized }
        return record
    }

    static func share(_ row: Row) throws -> ShareRecord {
        ShareRecord(
            id: row[1],
            workoutID: row[2],
            device: DeviceIdentity(row[3] as String),
            service: try ShareRow.service(row[4]),
            queuedAt: Date(timeIntervalSince1970: row[5])
        )
    }
}
