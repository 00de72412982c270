import ArgumentParser
import Foundation
import StrictJSON
import WorkoutProtocol
import WorkoutStorage

/// What the offline inspection commands share: opening the store read-only, and printing rows.
enum InspectedStore {
    /// Opens read-only, so inspecting beside a running daemon changes nothing.
    ///
    /// A bad path exits 1 with the reason.
    static func open(_ stateDirectory: String) throws -> SQLiteWorkoutStore {
        do {
            return try SQLiteWorkoutStore(stateDirectory: stateDirectory, mode: .readOnly)
        } catch let error as StorageOpenError {
            FileHandle.standardError.write(Data("workoutd: \(UntrustedText.escaped("\(error)"))\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The wearables' names, as `workoutctl label` set them, to show beside their serials.
    ///
    /// A database written before names were kept has no table for them, and opened read-only it is not migrated:
    /// its wearables are shown by serial alone.
    static func deviceNames(in store: SQLiteWorkoutStore) async -> [DeviceIdentity: String] {
        (try? await store.deviceNames()) ?? [:]
    }

    /// One compact JSON line, with what a terminal would act on (C1, bidi) as `\u` escapes.
    static func printJSONLine<Value: Encodable>(_ value: Value) throws {
        print(
            String(
                decoding: UntrustedText.escapedJSON(Array(try JSONEncoder.compactSorted().encode(value))),
                as: UTF8.self
            )
        )
    }
}
