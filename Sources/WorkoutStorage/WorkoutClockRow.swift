import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// A row of the `workoutClock` table.
///
/// The clock mark of one workout whose times were taken before the system clock was synchronised, with the boot-clock
/// readings a later correction starts from.
///
/// A side table, written only for marked workouts, so a hub with a synchronised clock writes no page more per
/// command than before, and the `workout` table (its row format and its upsert) is not touched.
struct WorkoutClockRow: Sendable {
    static let tableName = "workoutClock"

    var workoutID: Int64
    var mark: WorkoutClockMark
    var bootID: String?
    var startedBoot: Double?
    var endedBoot: Double?

    init?(_ record: WorkoutRecord) {
        guard let mark = record.clockMark else { return nil }
        workoutID = record.id
        self.mark = mark
        bootID = record.startedBoot?.bootID ?? record.endedBoot?.bootID
        startedBoot = record.startedBoot?.seconds
        endedBoot = record.endedBoot.flatMap { $0.bootID == bootID ? $0.seconds : nil }
    }

    static let upsertSQL = RowSQL.insert(
        into: tableName,
        columns: ["workoutID", "mark", "bootID", "startedBoot", "endedBoot"],
        updatingOnConflictOf: "workoutID"
    )

    var statementArguments: StatementArguments {
        [workoutID, mark.rawValue, bootID, startedBoot, endedBoot]
    }

    static func createTable(in db: Database) throws {
        // ON DELETE CASCADE: pruning a workout takes its mark along (foreign keys are enforced).
        try db.execute(
            sql: """
                CREATE TABLE workoutClock (
                    workoutID INTEGER PRIMARY KEY REFERENCES workout(id) ON DELETE CASCADE,
                    mark TEXT NOT NULL,
                    bootID TEXT,
                    startedBoot REAL,
                    endedBoot REAL
                )
                """
        )
    }

    /// Puts the stored marks (and boot readings) on `records`, read in one range query over their ids.
    static func attach(to records: inout [WorkoutRecord], in db: Database) throws {
        guard let low = records.lazy.map(\.id).min(), let high = records.lazy.map(\.id).max() else { return }
        var marks: [Int64: Row] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT workoutID, mark, bootID, startedBoot, endedBoot FROM workoutClock WHERE workoutID BETWEEN ? AND ?
                """,
            arguments: [low, high]
        )
        while let row = try rows.next() { marks[row[0]] = row.copy() }
        guard !marks.isEmpty else { return }
        for index in records.indices {
            if let row = marks[records[index].id] { apply(row, to: &records[index]) }
        }
    }

    /// `row` as read by ``attach(to:in:)``: workoutID, mark, bootID, startedBoot, endedBoot.
    static func apply(_ row: Row, to record: inout WorkoutRecord) {
        // An unknown mark (written by a newer version) is still a mark: the times are not to be trusted.
        record.clockMark = (row[1] as String?).flatMap(WorkoutClockMark.init(rawValue:)) ?? .unsynchronized
        if let bootID: String = row[2] {
            record.startedBoot = (row[3] as Double?).map { BootInstant(bootID: bootID, seconds: $0) }
            record.endedBoot = (row[4] as Double?).map { BootInstant(bootID: bootID, seconds: $0) }
        }
    }
}
