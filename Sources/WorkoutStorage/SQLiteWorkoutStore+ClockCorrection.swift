import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

extension SQLiteWorkoutStore {
    /// Corrects the times of ended workouts stored in this boot before the clock was synchronised.
    ///
    /// It uses their boot-clock readings and a synchronised `reading` (``WorkoutRecord/correct(from:)``), in one
    /// transaction; with replication on, each corrected workout is queued again so the central store gets the new times
    /// and the mark `corrected`. Returns how many were corrected. Active workouts are corrected when they end.
    public func correctClockMarks(from reading: ClockReading) async throws -> Int {
        guard reading.synchronized, let boot = reading.boot else { return 0 }
        let replicated = replicationDoorbell != nil
        let corrected = try await writing { db in
            let ids = try Int64.fetchAll(
                db,
                sql: """
                    SELECT workoutID FROM workoutClock WHERE mark = ? AND bootID = ? AND endedBoot IS NOT NULL
                    """,
                arguments: [WorkoutClockMark.unsynchronized.rawValue, boot.bootID]
            )
            guard !ids.isEmpty else { return 0 }
            var records = try WorkoutRow.fetchAll(db, keys: ids).map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            let update = try db.cachedStatement(sql: "UPDATE workout SET startedAt = ?, endedAt = ? WHERE id = ?")
            let mark = try db.cachedStatement(sql: WorkoutClockRow.upsertSQL)
            var changed: [Int64] = []
            for var record in records where record.correct(from: reading) {
                try update.execute(arguments: [
                    record.startedAt.timeIntervalSince1970, record.endedAt?.timeIntervalSince1970, record.id,
                ])
                if let row = WorkoutClockRow(record) { try mark.execute(arguments: row.statementArguments) }
                changed.append(record.id)
            }
            if replicated {
                let queue = try db.cachedStatement(
                    sql: "INSERT INTO replicationOutbox (kind, recordID, committedAt) VALUES (?, ?, ?)"
                )
                let now = reading.wall.timeIntervalSince1970
                for id in changed { try queue.execute(arguments: [ReplicationOutbox.Kind.workout.rawValue, id, now]) }
            }
            return changed.count
        }
        if corrected > 0 { replicationDoorbell?.ring() }
        return corrected
    }
}
