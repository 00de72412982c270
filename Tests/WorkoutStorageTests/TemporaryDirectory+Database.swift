import WorkoutdTesting

@testable import WorkoutStorage

extension TemporaryDirectory {
    /// Where a store opened on this directory keeps its database.
    var databasePath: String { path + "/" + SQLiteWorkoutStore.fileName }
}
