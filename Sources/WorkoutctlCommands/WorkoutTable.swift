import Foundation
import WorkoutProtocol

extension TextTable {
    /// Workouts as `workoutd workouts` and `workoutctl workouts` print them.
    ///
    /// One row each, in the order given.
    public static func workouts(_ workouts: [WorkoutRecord]) -> TextTable {
        // The FLAGS column appears only when a row has one, so the common table stays as it was.
        let flagged = workouts.contains { !flags(of: $0).isEmpty }
        var columns: [TextTable.Column] = [
            .init("ID", alignment: .right), .init("DEVICE"), .init("LOCATION"), .init("DATE"),
            .init("INTENSITY", alignment: .right), .init("STARTED"), .init("ENDED"),
            .init("DURATION_S", alignment: .right),
        ]
        if flagged { columns.append(.init("FLAGS")) }
        var table = TextTable(columns: columns)
        for workout in workouts {
            let device = workout.deviceName.map { "\($0) (\(workout.device))" } ?? workout.device.rawValue
            var row = [
                String(workout.id), device, workout.location, TableDate.format(workout.date),
                String(workout.intensityLevel), TableDate.format(workout.startedAt),
                workout.endedAt.map(TableDate.format) ?? "active",
                workout.durationSeconds.map(WorkoutDuration.text) ?? "",
            ]
            if flagged { row.append(flags(of: workout)) }
            table.append(row)
        }
        return table
    }

    /// What a reader should not take at face value.
    ///
    /// `date-implausible` (the wearable's date is outside ``PlausibleWorkoutDate``), `clock-unsynchronized` (the hub's
    /// times were taken before its clock was synchronised), `clock-corrected` (they were, and were corrected from the
    /// boot-time clock since).
    static func flags(of workout: WorkoutRecord) -> String {
        var flags: [String] = []
        if !workout.dateIsPlausible { flags.append("date-implausible") }
        switch workout.clockMark {
        case .unsynchronized?: flags.append("clock-unsynchronized")
        case .corrected?: flags.append("clock-corrected")
        case nil: break
        }
        return flags.joined(separator: ",")
    }
}
