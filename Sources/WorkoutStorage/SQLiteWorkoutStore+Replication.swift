import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

extension SQLiteWorkoutStore: ReplicationLog {
    /// The mark not yet written, read before the read transaction starts.
    ///
    /// A mark cleared since was written by a commit that the transaction then sees.
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

    /// Kept in memory until the next device commit writes it in its own transaction.
    ///
    /// That is ``commit(_:)``, or ``saveShippedMark()``. A write transaction of its own for every batch was an fsync
    /// and a turn of the single writer taken from the devices' group commits, ten times a second under load. Losing the
    /// mark in a crash only ships its changes again, which the central upserts absorb (keyed, never moving a row back).
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
