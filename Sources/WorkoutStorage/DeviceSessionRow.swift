import GRDB
import WorkoutEngine

/// A row of the `deviceSession` table: a device's ``SessionState`` and what `share_workout` would share.
struct DeviceSessionRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "deviceSession"

    var device: String
    /// The state as its Codable JSON, case name as the key: `{"idle":true}` or `{"active":{...}}`.
    var state: String
    /// Copied out of `state` so status queries need not parse JSON.
    var activeWorkoutID: Int64?
    var lastEndedWorkoutID: Int64?
}
