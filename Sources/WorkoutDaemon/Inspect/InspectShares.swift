import ArgumentParser
import Foundation
import WorkoutEngine
import WorkoutStorage
import WorkoutctlCommands

/// `workoutd shares`: lists queued and delivered shares, newest first, without a running daemon.
struct Shares: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List shares and their delivery state, newest first (reads the database; no daemon needed)."
    )

    @OptionGroup var options: InspectOptions

    func run() async throws {
        let store = try InspectedStore.open(options.stateDirectory)
        var shares = try await store.shares(limit: options.limit)
        let names = await InspectedStore.deviceNames(in: store)
        for index in shares.indices { shares[index].deviceName = names[shares[index].device] }
        if options.json {
            for share in shares { try InspectedStore.printJSONLine(share) }
            return
        }
        Output.table(.shares(shares))
    }
}
