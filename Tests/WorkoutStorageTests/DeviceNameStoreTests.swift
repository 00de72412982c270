import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// The names people give wearables.
///
/// Kept across a reopen (a restart), replaced, removed, and queried with the workouts they pick (a part of a name
/// resolved to identities, a part of an identity in SQL), the same as in memory.
@Suite struct DeviceNameStoreTests {
    @Test func namesOutliveAReopenAndCanBeReplacedOrRemoved() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            try await store.setDeviceName("Treadmill 3", for: "0483_5740_WB-0042")
            try await store.setDeviceName("Rower", for: "0483_5740_WB-0043")
            try await store.setDeviceName("Rower 1", for: "0483_5740_WB-0043")
        }
        let reopened = try SQLiteWorkoutStore(stateDirectory: directory.path)
        #expect(
            try await reopened.deviceNames() == ["0483_5740_WB-0042": "Treadmill 3", "0483_5740_WB-0043": "Rower 1"]
        )
        try await reopened.setDeviceName(nil, for: "0483_5740_WB-0042")
        #expect(try await reopened.deviceNames() == ["0483_5740_WB-0043": "Rower 1"])
    }

    @Test func aDeviceMatchAndActiveWorkoutsPickTheSameInSQLiteAndInMemory() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sqlite = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let memory = InMemoryWorkoutStore()
        for store in [sqlite, memory] as [any WorkoutStore] {
            let engine = try await WorkoutEngine(store: store, clock: SteppedClock().workoutClock)
            for (n, device) in ["Band-A", "band-b", "strap-C"].enumerated() {
                let session = engine.session(for: DeviceIdentity(device))
                #expect(await session.handle([DecodedLines.start(1)]).allSatisfy(\.isSuccess))
                if n != 1 { #expect(await session.handle([DecodedLines.end(2)]).allSatisfy(\.isSuccess)) }
            }
        }
        for query in [
            WorkoutQuery(devices: DeviceMatch(text: "BAND")),
            WorkoutQuery(devices: DeviceMatch(text: "zzz", identities: ["strap-C"])),
            WorkoutQuery(activeOnly: true),
            WorkoutQuery(devices: DeviceMatch(text: "-a"), activeOnly: true),
        ] {
            let fromSQLite = try await sqlite.workouts(matching: query).map(\.device.rawValue)
            let fromMemory = try await memory.workouts(matching: query).map(\.device.rawValue)
            #expect(fromSQLite == fromMemory, "\(query)")
        }
        #expect(try await sqlite.workouts(matching: WorkoutQuery(devices: DeviceMatch(text: "BAND"))).count == 2)
        #expect(try await sqlite.activeWorkouts().map(\.device.rawValue) == ["band-b"])
        #expect(try await memory.activeWorkouts().map(\.device.rawValue) == ["band-b"])
    }
}
