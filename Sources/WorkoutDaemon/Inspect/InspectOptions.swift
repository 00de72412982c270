import ArgumentParser
import WorkoutStorage

/// The options every offline inspect command shares (`workoutd workouts`, `workoutd shares`).
struct InspectOptions: ParsableArguments {
    @Option(name: .customLong("state-dir"), help: "The daemon's state directory.")
    var stateDirectory: String = StorageConfiguration.defaultStateDirectory

    @Flag(name: .long, help: "One JSON object per line instead of a table.")
    var json = false

    @Option(name: .long, help: "At most this many rows.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be zero or more; got \(limit).") }
    }
}
