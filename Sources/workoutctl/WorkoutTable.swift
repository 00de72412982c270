import Foundation
import WorkoutProtocol

extension TextTable {
    /// Workouts as `workoutd workouts` and `workoutctl workouts` print them: one row each, in the order given.
    public static func workouts(_ workouts: [WorkoutRecord]) -> TextTable {
        var table = TextTable(columns: [
            .init("ID", alignment: .right), .init("DEVICE"), .init("LOCATION"), .init("DATE"),
            .init("INTENSITY", alignment: .right), .init("STARTED"), .init("ENDED"),
            .init("DURATION_S", alignment: .right),
        ])
        for workout in workouts {
            table.append([
                String(workout.id), workout.device.rawValue, workout.location, TableDate.format(workout.date),
                String(workout.intensityLevel), TableDate.format(workout.startedAt),
                workout.endedAt.map(TableDate.format) ?? "active",
                workout.durationSeconds.map(WorkoutDuration.text) ?? "",
            ])
        }
        return table
    }
}
