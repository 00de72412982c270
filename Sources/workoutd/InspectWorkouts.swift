import ArgumentParser
import CommandLineOutput
import Foundation
import RecordTables
import WorkoutEngine
import WorkoutStorage

/// `workoutd workouts`: lists stored workouts, newest first, without a running daemon.
struct Workouts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List stored workouts, newest first (reads the database; no daemon needed).")

    @Option(name: .customLong("state-dir"), help: "The daemon's state directory.")
    var stateDirectory: String = "/var/lib/workoutd"

    @Flag(name: .long, help: "One JSON object per line instead of a table.")
    var json = false

    @Option(name: .long, help: "Only this device's workouts.")
    var device: String?

    @Option(name: .long, help: "At most this many workouts.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be zero or more; got \(limit).") }
    }

    func run() async throws {
        let store = try InspectedStore.open(stateDirectory)
        let workouts = try await store.workouts(device: device.map { DeviceIdentity($0) }, limit: limit)
        if json {
            for workout in workouts { try InspectedStore.printJSONLine(workout) }
            return
        }
        print(TextTable.workouts(workouts).render(), terminator: "")
    }
}
