import ControlProtocol
import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

import enum WorkoutctlCommands.SpokenDuration

#if canImport(Glibc)
import Glibc
#endif

/// `workoutctl` as a precise tool.
///
/// The exit status says what happened, and a duration reads the same everywhere.
@Suite(.serialized) struct OperatorToolTests {
    private let start = CommandLines.start(date: "2020-03-16T19:45:13Z")

    @Test func sendToADeviceThatIsNotConnectedExits2AndListsTheConnectedOnes() async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(.inProcess, devices: [wearable.devicePath]) { daemon in
            try sendToADeviceThatIsNotConnected(daemon, wearable: wearable)
        }
    }

    private func sendToADeviceThatIsNotConnected(_ daemon: TestDaemon, wearable: SimulatedWearable) throws {
        try daemon.waitUntilConnected(wearable.devicePath)

        let typo = try daemon.ctl(["send", "--device", "wearabel", start])
        #expect(typo.status == 2)
        #expect(typo.stdout.isEmpty)
        #expect(
            typo.stderr.contains(
                "no connected device 'wearabel'; connected: \(wearable.devicePath) (\(wearable.devicePath))"
            ),
            "\(typo.stderr)"
        )
        #expect(try daemon.ctl(["workouts", "--json"]).stdout.isEmpty, "no workout was created for the typo")

        // --create opens a session for a name on purpose.
        let created = try daemon.ctl(["send", "--create", "--device", "bench-1", start])
        #expect(created.status == 0)
        #expect(created.lines.last?.contains("workout 1 started") == true, "\(created.stdout)")
        // An error reply is printed and fails the command; an ok reply succeeds.
        let again = try daemon.ctl(["send", "--create", "--device", "bench-1", start])
        #expect(again.status == 1)
        #expect(again.stdout.contains("workout_already_active"))
        let ended = try daemon.ctl(["send", "--device", wearable.devicePath, start])
        #expect(ended.status == 0)
    }

    @Test func helpDocumentsTheExitCodes() throws {
        // Help text is wrapped to the terminal: compare words, not line breaks.
        func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let help = words(try Workoutctl.run(["--help"]).stdout)
        #expect(
            help.contains("Exit status: 0 success; 1 workoutd refused the request, or `send` got an error reply;"),
            "\(help)"
        )
        #expect(
            help.contains("2 `send` named a device that is not connected; 64 bad usage; 69 workoutd is not running.")
        )
        let sendHelp = words(try Workoutctl.run(["send", "--help"]).stdout)
        #expect(sendHelp.contains("2 the device is not connected"))
        #expect(sendHelp.contains("--create"))
    }

    @Test func aDurationReadsTheSameInTheReplyTablesAndJSON() async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(.inProcess, devices: [wearable.devicePath]) { daemon in
            try aDurationReadsTheSame(daemon, wearable: wearable)
        }
    }

    private func aDurationReadsTheSame(_ daemon: TestDaemon, wearable: SimulatedWearable) throws {
        try daemon.waitUntilConnected(wearable.devicePath)
        #expect(try wearable.request(start).contains("ok"))
        usleep(7_000)  // a sub-second workout: where whole-second dates would read 0.000
        let reply = try wearable.request(CommandLines.end())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
        let duration = try #require(object["duration_seconds"] as? Double)
        let text = SpokenDuration.text(duration)
        #expect(duration > 0)

        let json = try daemon.ctlJSON(["workouts"], as: WorkoutRecord.self)
        #expect(json.first?.durationSeconds == duration, "workoutctl workouts --json")
        let table = try daemon.ctl(["workouts"])
        #expect(table.lines.count == 2)
        // The duration is the last column, or the one before FLAGS (a clock not synchronised, as in this container).
        func endsWithDuration(_ line: Substring?) -> Bool {
            guard let line else { return false }
            return line.hasSuffix(" " + text) || line.hasSuffix(" " + text + "  clock-unsynchronized")
        }
        #expect(
            endsWithDuration(table.lines.last.map { Substring($0) }),
            "workoutctl workouts: \(table.stdout) vs \(text)"
        )

        let state = daemon.stateDirectory.path
        let offline = try DaemonProcess(arguments: ["workouts", "--state-dir", state])
        #expect(try offline.waitForExit() == 0)
        #expect(endsWithDuration(offline.log.split(separator: "\n").last), "workoutd workouts: \(offline.log)")
    }
}

/// One owner per tty: a tty another program holds with `flock` (as picocom does) is not opened.
///
/// Not even by root (which TIOCEXCL does not stop); the reason is logged, and the tty is served once released.
@Suite(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct TTYLockTests {
    @Test func aHeldTTYIsLeftAloneUntilReleased() throws {
        let wearable = try SimulatedWearable()
        let holder = open(wearable.devicePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        #expect(holder >= 0)
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
        let daemon = try ControlledDaemon(devices: [wearable.devicePath])
        try daemon.daemon.waitForLog(
            "\(wearable.devicePath) is in use by another program (pid \(getpid())), which holds the tty's flock"
        )
        let devices = try daemon.ctlJSON(["devices"], as: DeviceReport.self)
        #expect(!devices.contains { $0.node == wearable.devicePath && $0.connected }, "the held tty was not opened")
        // workoutctl devices says why, naming the holder (this test process).
        let held = try #require(devices.first { $0.node == wearable.devicePath })
        #expect(held.waitingReason == "held by another program (pid \(getpid()))")
        let row = try daemon.ctl(["devices"]).lines.first { $0.contains(wearable.devicePath) }
        #expect(
            row?.contains("waiting: held by another program (pid \(getpid()))") == true,
            "\(String(describing: row))"
        )

        flock(holder, LOCK_UN)
        close(holder)
        try daemon.waitUntilConnected(wearable.devicePath)
        #expect(
            try daemon.ctlJSON(["devices"], as: DeviceReport.self).first { $0.node == wearable.devicePath }?
                .waitingReason == nil,
            "served: no reason left behind"
        )
        #expect(try wearable.request(CommandLines.start(date: "2020-03-16T19:45:13Z")).contains(#""status":"ok""#))
    }
}
