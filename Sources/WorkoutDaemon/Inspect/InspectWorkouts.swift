import ArgumentParser
import Foundation
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage
import WorkoutctlCommands

/// `workoutd workouts`: lists stored workouts, newest first, without a running daemon.
struct Workouts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List stored workouts, newest first (reads the database; no daemon needed)."
    )

    @OptionGroup var options: InspectOptions

    @Option(name: .long, help: "Only this device's workouts.")
    var device: String?

    func run() async throws {
        let store = try InspectedStore.open(options.stateDirectory)
        var workouts = try await store.workouts(device: device.map { DeviceIdentity($0) }, limit: options.limit)
        let names = await InspectedStore.deviceNames(in: store)
        for index in workouts.indices { workouts[index].deviceName = names[workouts[index].device] }
        if options.json {
            for workout in workouts { try InspectedStore.printJSONLine(workout) }
            return
        }
        Output.table(.workouts(workouts))
    }
}
