import ArgumentParser
import CommandLineOutput
import Foundation
import RecordTables
import WorkoutEngine
import WorkoutStorage

/// `workoutd shares`: lists queued and delivered shares, newest first, without a running daemon.
struct Shares: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List shares and their delivery state, newest first (reads the database; no daemon needed).")

    @Option(name: .customLong("state-dir"), help: "The daemon's state directory.")
    var stateDirectory: String = "/var/lib/workoutd"

    @Flag(name: .long, help: "One JSON object per line instead of a table.")
    var json = false

    @Option(name: .long, help: "At most this many shares.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be zero or more; got \(limit).") }
    }

    func run() async throws {
        let store = try InspectedStore.open(stateDirectory)
        let shares = try await store.shares(limit: limit)
        if json {
            for share in shares { try InspectedStore.printJSONLine(share) }
            return
        }
        print(TextTable.shares(shares).render(), terminator: "")
    }
}
