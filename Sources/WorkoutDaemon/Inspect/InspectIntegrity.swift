import ArgumentParser
import Foundation
import WorkoutProtocol
import WorkoutStorage

/// `workoutd check-db`: SQLite's integrity check of the database, opened read-only.
///
/// Beside a running daemon or without one.
struct CheckDatabase: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-db",
        abstract: "Check the database's integrity, read-only (no daemon needed); exit 0 when sound, 1 otherwise."
    )

    @Option(name: .customLong("state-dir"), help: "The daemon's state directory.")
    var stateDirectory: String = StorageConfiguration.defaultStateDirectory

    func run() async throws {
        let store = try InspectedStore.open(stateDirectory)
        let problems: [String]
        do {
            problems = try await store.checkIntegrity()
        } catch {
            FileHandle.standardError.write(Data("workoutd: \(UntrustedText.escaped("\(error)"))\n".utf8))
            throw ExitCode.failure
        }
        if problems.isEmpty { return print("ok: the database in \(stateDirectory) is sound") }
        print("damaged: the database in \(stateDirectory) has problems:")
        for problem in problems { print("  \(UntrustedText.escaped(problem))") }
        throw ExitCode.failure
    }
}
