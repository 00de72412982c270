import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

import struct WorkoutctlCommands.TextTable

/// The FLAGS column of `workoutctl workouts`: what a reader should not take at face value.
@Suite struct WorkoutFlagsTableTests {
    static let started = Date(timeIntervalSince1970: 1_780_000_000)

    static func record(_ id: Int64, date: Date, mark: WorkoutClockMark? = nil) -> WorkoutRecord {
        var record = WorkoutRecord(
            id: id,
            device: "band",
            workout: Workout(location: "Gym", date: date, intensityLevel: 3),
            startedAt: started,
            endedAt: started.addingTimeInterval(60)
        )
        record.clockMark = mark
        return record
    }

    @Test func flagsAppearOnlyWhenARowHasOne() {
        let plain = TextTable.workouts([Self.record(1, date: Self.started)]).render()
        #expect(!plain.contains("FLAGS"))

        let table = TextTable.workouts([
            Self.record(3, date: Date(timeIntervalSince1970: 0)),
            Self.record(2, date: Self.started, mark: .unsynchronized),
            Self.record(1, date: Self.started, mark: .corrected),
        ]).render().split(separator: "\n")
        #expect(table[0].hasSuffix("FLAGS"))
        #expect(table[1].hasSuffix("date-implausible"))
        #expect(table[1].contains("1970-01-01"), "the date is shown as the wearable gave it")
        #expect(table[2].hasSuffix("clock-unsynchronized"))
        #expect(table[3].hasSuffix("clock-corrected"))
    }
}

/// `clock.assume_synchronized: true`: the wall clock is trusted, so nothing is marked.
///
/// Whatever the host's state.
@Suite struct AssumedSynchronizedClockTests {
    @Test func noTimeIsMarkedWhenTheClockIsAssumedSynchronized() async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(
            .inProcess,
            configuration: "log_level: info\nclock:\n  assume_synchronized: true\n",
            devices: [wearable.devicePath]
        ) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            #expect(
                try wearable.request(CommandLines.start(id: 1, date: "2020-03-16T19:45:13Z"))
                    .contains(#""status":"ok""#)
            )
            #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
            let workouts = try daemon.ctlJSON(["workouts"], as: WorkoutRecord.self)
            #expect(workouts.count == 1 && workouts.first?.clockMark == nil)
            #expect(try daemon.ctl(["workouts"]).lines.first?.contains("FLAGS") == false)
        }
    }
}
