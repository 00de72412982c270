import Foundation
import WorkoutProtocol
import WorkoutdTesting

/// A workout as `workoutd workouts --json` prints it: only what the durability checks compare.
struct StoredWorkout: Decodable {
    var id: Int64
    var device: String
    var endedAt: Date?
    var startCommandID: CommandID?
    var endCommandID: CommandID?
}

/// A share as `workoutd shares --json` prints it.
struct StoredShare: Decodable {
    var id: Int64
    var workoutID: Int64
    var status: String
    var commandID: CommandID?
}

/// What a user sees with the offline inspection commands.
///
/// `workoutd workouts|shares --state-dir DIR --json`.
enum OfflineInspection {
    static func workouts(in stateDirectory: String) throws -> [StoredWorkout] {
        try rows("workouts", stateDirectory)
    }

    static func shares(in stateDirectory: String) throws -> [StoredShare] {
        try rows("shares", stateDirectory)
    }

    private static func rows<Row: Decodable>(_ subcommand: String, _ stateDirectory: String) throws -> [Row] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try DaemonProcess.binaryPath())
        process.arguments = [subcommand, "--state-dir", stateDirectory, "--json"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting: thousands of rows would fill the pipe and block the child.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestingError("workoutd \(subcommand) exited \(process.terminationStatus): \(message)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try data.split(separator: UInt8(ascii: "\n")).map { try decoder.decode(Row.self, from: Data($0)) }
    }
}
