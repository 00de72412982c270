import Foundation
import WorkoutProtocol

extension TextTable {
    /// Workouts as `workoutd workouts` and `workoutctl workouts` print them.
    ///
    /// One row each, in the order given.
    public static func workouts(_ workouts: [WorkoutRecord]) -> TextTable {
        // The FLAGS column appears only when a row has one, so the common table stays as it was.
        let flagged = workouts.contains { !$0.flags.isEmpty }
        var columns: [TextTable.Column] = [
            .init("ID", alignment: .right), .init("DEVICE"), .init("LOCATION"), .init("DATE", truncatable: false),
            .init("INTENSITY", alignment: .right), .init("STARTED", truncatable: false),
            .init("ENDED", truncatable: false),
            .init("DURATION", alignment: .right),
        ]
        if flagged { columns.append(.init("FLAGS", truncatable: false)) }
        var table = TextTable(columns: columns)
        for workout in workouts {
            let device = workout.deviceName.map { "\($0) (\(workout.device))" } ?? workout.device.rawValue
            var row = [
                String(workout.id), device, workout.location, TableDate.format(workout.date),
                String(workout.intensityLevel), TableDate.format(workout.startedAt),
                workout.endedAt.map(TableDate.format) ?? "active",
                workout.durationSeconds.map(SpokenDuration.text) ?? "",
            ]
            if flagged { row.append(flags(of: workout)) }
            table.append(row)
        }
        return table
    }

    /// The FLAGS cell: ``WorkoutRecord/flags``, comma-separated.
    static func flags(of workout: WorkoutRecord) -> String {
        workout.flags.map(\.rawValue).joined(separator: ",")
    }
}
