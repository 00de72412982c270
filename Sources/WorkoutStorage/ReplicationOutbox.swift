import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// The `replicationOutbox` table: what each commit wrote, in commit order, until the shipper has it in
/// the central database. Written inside the commit's own transaction, so it is exactly what was committed.
enum ReplicationOutbox {
    static let tableName = "replicationOutbox"
    /// One row: every outbox entry up to `throughSequence` is in the central database.
    static let watermarkTableName = "replicationShipped"
    /// The watermark, for a query's WHERE clause.
    static let shippedThrough = "(SELECT throughSequence FROM replicationShipped WHERE id = 1)"
    /// The watermark or the shipper's mark not yet written (bound as the one argument), whichever is further.
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

    /// One statement per kind, the ids as a JSON array (`json_each` keeps their order), not one per record: a
    /// pipelined commit writes a few hundred records, and each statement's own cost in GRDB and SQLite (its
    /// arguments, binding, stepping, resetting) is paid by the device path. With the server unreachable (the
    /// outbox written, nothing shipped) `make bench`'s pipelined rounds ran at 0.83 of replication off with a
    /// statement per record, at 0.95 with one per kind (same run).
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
    /// A record from the columns the central tables have, read straight from a row of ``SQLiteWorkoutStore/pendingChanges(limit:)``
    /// (by position, after the sequence in column 0). Decoding whole records (GRDB's Codable rows, a JSONDecoder
    /// for every command id) was most of what a batch cost the hub's CPU, which the device path needs; the
    /// central database keeps no command ids or delivery state.
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

extension SQLiteWorkoutStore: ReplicationLog {
    /// The mark not yet written, read before the read transaction starts: a mark cleared since was written
    /// by a commit that the transaction then sees.
    private var unsavedShippedThrough: Int64 {
        unsavedShippedMark.withLock { $0?.sequence } ?? 0
    }

    public func pendingChanges(after sequence: Int64?, limit: Int) async throws -> ReplicationBatch {
        let unsaved = unsavedShippedThrough
        return try await reading { db in
            let mark =
                try Int64.fetchOne(db, sql: "SELECT \(ReplicationOutbox.shippedThroughOrUnsaved)", arguments: [unsaved])
                ?? 0
            let shipped = max(mark, sequence ?? 0)
            guard
                let through = try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT MAX(sequence) FROM (SELECT sequence FROM replicationOutbox WHERE sequence > ? ORDER BY sequence LIMIT ?)
                        """,
                    arguments: [shipped, max(1, limit)]
                )
            else {
                return ReplicationBatch(changes: [], throughSequence: nil)
            }
            // Joined in SQL, one query per table, and a record changed twice in the batch once, in its newest
            // state, at its last sequence (GROUP BY): this runs beside the device path, and per-entry work in
            // Swift (rows, a dictionary of entries, an IN list of ids) was most of what a batch cost.
            var changes: [ReplicationChange] = []
            let workouts = try Row.fetchCursor(
                db,
                sql: """
                    SELECT MAX(o.sequence), w.id, w.device, w.location, w.date, w.intensityLevel, w.startedAt, w.endedAt, c.mark
                    FROM replicationOutbox o JOIN workout w ON w.id = o.recordID LEFT JOIN workoutClock c ON c.workoutID = w.id
                    WHERE o.sequence > ? AND o.sequence <= ? AND o.kind = ? GROUP BY o.recordID
                    """,
                arguments: [shipped, through, ReplicationOutbox.Kind.workout.rawValue]
            )
            while let row = try workouts.next() {
                changes.append(ReplicationChange(sequence: row[0], record: .workout(ReplicationOutbox.workout(row))))
            }
            let shares = try Row.fetchCursor(
                db,
                sql: """
                    SELECT MAX(o.sequence), s.id, s.workoutID, s.device, s.service, s.queuedAt
                    FROM replicationOutbox o JOIN share s ON s.id = o.recordID
                    WHERE o.sequence > ? AND o.sequence <= ? AND o.kind = ? GROUP BY o.recordID
                    """,
                arguments: [shipped, through, ReplicationOutbox.Kind.share.rawValue]
            )
            while let row = try shares.next() {
                changes.append(ReplicationChange(sequence: row[0], record: .share(try ReplicationOutbox.share(row))))
            }
            changes.sort { $0.sequence < $1.sequence }
            return ReplicationBatch(changes: changes, throughSequence: through)
        }
    }

    /// Kept in memory until the next device commit writes it in its own transaction (``commit(_:)``), or
    /// ``saveShippedMark()`` does. A write transaction of its own for every batch was an fsync and a turn of the
    /// single writer taken from the devices' group commits, ten times a second under load. Losing the mark in
    /// a crash only ships its changes again, which the central upserts absorb (keyed, never moving a row back).
    public func markShipped(through sequence: Int64, at date: Date) async throws {
        unsavedShippedMark.withLock { mark in
            if mark.map({ $0.sequence < sequence }) ?? true {
                mark = ReplicationOutbox.ShippedMark(sequence: sequence, date: date)
            }
        }
    }

    public func saveShippedMark() async throws {
        guard let mark = unsavedShippedMark.withLock({ $0 }) else { return }
        try await writing { db in try ReplicationOutbox.save(mark, in: db) }
        shippedMarkSaved(mark)
    }

    /// Forgets the unsaved mark once a transaction wrote it, unless a newer one came meanwhile.
    func shippedMarkSaved(_ saved: ReplicationOutbox.ShippedMark) {
        unsavedShippedMark.withLock { mark in
            if mark == saved { mark = nil }
        }
    }

    public func pendingChangeCount() async throws -> Int {
        let unsaved = unsavedShippedThrough
        return try await reading { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT COUNT(*) FROM replicationOutbox WHERE sequence > \(ReplicationOutbox.shippedThroughOrUnsaved)",
                arguments: [unsaved]
            ) ?? 0
        }
    }

    public func pruneShipped(before date: Date) async throws -> Int {
        let mark = unsavedShippedMark.withLock { $0 }
        let removed = try await writing { db in
            // What this prunes is decided by the written mark: write the newest first.
            if let mark { try ReplicationOutbox.save(mark, in: db) }
            let cutoff = date.timeIntervalSince1970
            // Anything with an unshipped outbox entry stays; so do the newest ids (the id watermark is
            // MAX(id): removing them would let a new workout reuse an id the central database already has),
            // shares still waiting for delivery, and workouts a session or a share still refers to.
            try db.execute(
                sql: """
                    DELETE FROM share
                    WHERE status != 'pending' AND queuedAt < ?
                      AND id < (SELECT MAX(id) FROM share)
                      AND NOT EXISTS (SELECT 1 FROM replicationOutbox o WHERE o.kind = 'share' AND o.recordID = share.id AND o.sequence > \(ReplicationOutbox.shippedThrough))
                    """,
                arguments: [cutoff]
            )
            try db.execute(
                sql: """
                    DELETE FROM workout
                    WHERE endedAt IS NOT NULL AND endedAt < ?
                      AND id < (SELECT MAX(id) FROM workout)
                      AND NOT EXISTS (SELECT 1 FROM replicationOutbox o WHERE o.kind = 'workout' AND o.recordID = workout.id AND o.sequence > \(ReplicationOutbox.shippedThrough))
                      AND NOT EXISTS (SELECT 1 FROM share s WHERE s.workoutID = workout.id)
                      AND id NOT IN (SELECT activeWorkoutID FROM (\(ReplyRing.sessionsSQL)) WHERE activeWorkoutID IS NOT NULL)
                      AND id NOT IN (SELECT lastEndedWorkoutID FROM (\(ReplyRing.sessionsSQL)) WHERE lastEndedWorkoutID IS NOT NULL)
                    """,
                arguments: [cutoff]
            )
            let removed = db.changesCount
            // committedAt, not the time of shipping: an entry shipped is old enough when it was committed before the cutoff.
            // The newest entry stays: sequences are one above the largest (no AUTOINCREMENT), and must never go back.
            try db.execute(
                sql: """
                    DELETE FROM replicationOutbox WHERE sequence <= \(ReplicationOutbox.shippedThrough) AND committedAt < ?
                      AND sequence < (SELECT MAX(sequence) FROM replicationOutbox)
                    """,
                arguments: [cutoff]
            )
            return removed
        }
        if let mark { shippedMarkSaved(mark) }
        // Freed pages count against storage.max_database_bytes no more: a full hub takes new workouts again.
        if removed > 0 { measureSize() }
        return removed
    }
}
