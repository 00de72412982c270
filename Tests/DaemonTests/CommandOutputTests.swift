import ControlProtocol
import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

import class WorkoutctlCommands.ControlConnection
import enum WorkoutctlCommands.TableDate

/// Every workoutctl command against a running daemon with a wearable on a pty.
///
/// The table a person reads and the JSON lines a script reads.
@Suite(.serialized) struct CommandOutputTests {
    /// Runs `body` against a daemon serving a wearable on a pty.
    ///
    /// The wearable has a finished, shared workout, one rejected line and one retried id.
    private func withDaemon(
        _ mode: DaemonTestMode = .inProcess,
        _ body: (SimulatedWearable, TestDaemon) async throws -> Void
    ) async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(mode, devices: [wearable.devicePath]) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            #expect(
                try wearable.request(CommandLines.start(id: 1, location: "Gary's Gym"))
                    .contains(#""status":"ok""#)
            )
            #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
            #expect(try wearable.request(CommandLines.share(id: 3)).contains(#""status":"ok""#))
            #expect(try wearable.request("not json").contains("malformed_json"))
            #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""replayed":true"#))
            try await body(wearable, daemon)
        }
    }

    /// Column starts in a table's header, so rows can be checked against them.
    private func columnStarts(_ header: String, _ names: [String]) throws -> [String.Index] {
        try names.map { name in
            guard let range = header.range(of: name) else { throw TestingError("no column \(name) in \(header)") }
            return range.lowerBound
        }
    }

    @Test(arguments: DaemonTestMode.inLane)
    func status(mode: DaemonTestMode) async throws {
        try await withDaemon(mode) { wearable, daemon in
            // The delivery worker may send the queued share at any moment: the count shown lies between the
            // pending shares listed just before and just after.
            let pendingBefore = try pendingShares(daemon)
            let table = try daemon.ctl(["status"])
            let pendingAfter = try pendingShares(daemon)
            #expect(table.status == 0)
            #expect(table.lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["FIELD", "VALUE"])
            let valueColumn = try #require(table.lines.first?.range(of: "VALUE")).lowerBound.utf16Offset(
                in: table.lines[0]
            )
            let rows = Dictionary(
                uniqueKeysWithValues: table.lines.dropFirst().map { line in
                    (
                        String(line.prefix(valueColumn)).trimmingCharacters(in: .whitespaces),
                        String(line.dropFirst(valueColumn))
                    )
                }
            )
            #expect(rows["version"] == WorkoutdVersion.current)
            #expect(rows["devices"] == "1 connected")
            #expect(rows["commands"] == "5")
            #expect(rows["errors"] == "1")
            #expect(rows["invalid lines"] == "1")
            #expect(rows["replays"] == "1")
            #expect(rows["active workouts"] == "0")
            let shown = try #require(rows["queued shares"].flatMap { Int($0) })
            #expect((pendingAfter...pendingBefore).contains(shown))

            let pendingBeforeJSON = try pendingShares(daemon)
            let json = try daemon.ctlJSON(["status"], as: StatusReport.self)
            let pendingAfterJSON = try pendingShares(daemon)
            let status = try #require(json.first)
            #expect(json.count == 1)
            #expect(status.pid == daemon.process?.process.processIdentifier ?? getpid(), "the daemon's process")
            #expect(status.devicesConnected == 1)
            #expect(status.counters.commands == 5)
            #expect(
                status.counters.workoutsStarted == 1 && status.counters.workoutsEnded == 1
                    && status.counters.sharesQueued == 1
            )
            #expect(status.uptimeSeconds > 0)
            #expect((pendingAfterJSON...pendingBeforeJSON).contains(status.queuedShares))
        }
    }

    /// Shares not yet delivered, as `shares` lists them.
    ///
    /// A delivery worker may already have sent the one queued.
    private func pendingShares(_ daemon: TestDaemon) throws -> Int {
        try daemon.ctlJSON(["shares"], as: ShareRecord.self).filter { $0.status == .pending }.count
    }

    @Test func devices() async throws {
        try await withDaemon { wearable, daemon in
            let table = try daemon.ctl(["devices"])
            #expect(table.status == 0)
            #expect(table.lines.count == 2)
            let header = table.lines[0]
            let starts = try columnStarts(header, ["DEVICE", "NODE", "STATE", "SINCE"])
            let row = table.lines[1]
            let offset = { (index: String.Index) in index.utf16Offset(in: header) }
            #expect(row.hasPrefix(wearable.devicePath))
            #expect(String(row.dropFirst(offset(starts[1]))).hasPrefix(wearable.devicePath))
            #expect(String(row.dropFirst(offset(starts[2]))).hasPrefix("connected"))
            // Counters are right-aligned under their headers: the row ends where the header ends.
            #expect(row.count == header.count)
            #expect(row.hasSuffix("5       1            1"))

            let devices = try daemon.ctlJSON(["devices"], as: DeviceReport.self)
            #expect(
                devices == [
                    DeviceReport(
                        identity: wearable.devicePath,
                        node: wearable.devicePath,
                        connected: true,
                        connectedSince: devices.first?.connectedSince,
                        commands: 5,
                        errors: 1,
                        connections: 1
                    )
                ]
            )
            #expect(devices.first?.connectedSince != nil)
        }
    }

    @Test func workouts() async throws {
        try await withDaemon { wearable, daemon in
            let table = try daemon.ctl(["workouts"])
            #expect(table.status == 0)
            #expect(table.lines.count == 2)
            // FLAGS follows when a row has one: here, on a host whose clock is not synchronised (this container).
            let header = table.lines[0].split(separator: " ")
            #expect(
                Array(header.prefix(8)) == [
                    "ID", "DEVICE", "LOCATION", "DATE", "INTENSITY", "STARTED", "ENDED", "DURATION",
                ]
            )
            #expect(header.count == 8 || (header.last == "FLAGS" && table.lines[1].hasSuffix("clock-unsynchronized")))
            #expect(table.lines[1].contains("Gary's Gym"))
            #expect(table.lines[1].contains("2020-03-16 19:45:13Z"))

            let workouts = try daemon.ctlJSON(
                ["workouts", "--device", wearable.devicePath, "--limit", "5"],
                as: WorkoutRecord.self
            )
            #expect(workouts.count == 1)
            #expect(workouts.first?.location == "Gary's Gym")
            #expect(workouts.first?.intensityLevel == 5)
            #expect(workouts.first?.startCommandID == .integer(1))
            #expect(workouts.first?.endedAt != nil)

            // The JSON's flags are the table's FLAGS, with the same words; the line carries them as an array.
            let flags = try #require(workouts.first).flags.map(\.rawValue)
            #expect(flags.isEmpty ? header.count == 8 : table.lines[1].hasSuffix(flags.joined(separator: ",")))
            let raw = try daemon.ctl(["workouts", "--json"]).stdout
            #expect(raw.contains(#""flags":["# + flags.map { "\"\($0)\"" }.joined(separator: ",") + "]"), "\(raw)")

            // --since and --until bound the start as /api/workouts does: at or after, and before.
            let started = try #require(workouts.first).startedAt
            let second = TableDate.format(started)
            #expect(try daemon.ctlJSON(["workouts", "--since", second], as: WorkoutRecord.self).count == 1)
            let later = started.addingTimeInterval(1).formatted(.iso8601)
            #expect(try daemon.ctlJSON(["workouts", "--since", later], as: WorkoutRecord.self).isEmpty)
            #expect(try daemon.ctlJSON(["workouts", "--until", later], as: WorkoutRecord.self).count == 1)
            let earlier = started.addingTimeInterval(-1).formatted(.iso8601)
            #expect(try daemon.ctlJSON(["workouts", "--until", earlier], as: WorkoutRecord.self).isEmpty)
            let badTime = try daemon.ctl(["workouts", "--since", "yesterday"])
            #expect(badTime.status == 64)
            #expect(badTime.stderr.contains("--since must be an ISO 8601 time"), "\(badTime.stderr)")

            // --device as /api/workouts takes it: part of the serial, node or name, letters in any case.
            #expect(try daemon.ctl(["label", wearable.devicePath, "Front Desk"]).status == 0)
            #expect(try daemon.ctlJSON(["workouts", "--device", "front"], as: WorkoutRecord.self).count == 1)

            // `workoutd workouts`, reading the database without the daemon, shows the same name.
            let state = daemon.stateDirectory.path
            let offline = try DaemonProcess(arguments: ["workouts", "--state-dir", state])
            #expect(try offline.waitForExit() == 0)
            #expect(offline.log.contains("Front Desk ("), "\(offline.log)")
            let offlineJSON = try DaemonProcess(arguments: ["workouts", "--state-dir", state, "--json"])
            #expect(try offlineJSON.waitForExit() == 0)
            #expect(offlineJSON.log.contains(#""deviceName":"Front Desk""#), "\(offlineJSON.log)")
            let tail = String(wearable.devicePath.suffix(4))
            #expect(try daemon.ctlJSON(["workouts", "--device", tail], as: WorkoutRecord.self).count == 1)

            let other = try daemon.ctl(["workouts", "--device", "someone-else"])
            #expect(other.lines.count == 1, "only the header for a device with no workouts")
            #expect(try daemon.ctl(["workouts", "--limit", "0"]).status != 0)
        }
    }

    @Test func shares() async throws {
        try await withDaemon { wearable, daemon in
            let table = try daemon.ctl(["shares"])
            #expect(table.status == 0)
            #expect(table.lines.count == 2)
            #expect(table.lines[0].hasPrefix("ID  WORKOUT  DEVICE"))
            #expect(table.lines[1].contains("twitter"))

            let shares = try daemon.ctlJSON(["shares"], as: ShareRecord.self)
            #expect(shares.map(\.service) == [.twitter])
            #expect(shares.first?.commandID == .integer(3))
        }
    }

    @Test func sendRunsOnTheDeviceSession() async throws {
        try await withDaemon { wearable, daemon in
            // The device's session has no active workout: end_workout must fail there, start must succeed.
            let rejected = try daemon.ctl(["send", "--device", wearable.devicePath, CommandLines.end(id: "x")])
            #expect(rejected.status == 1, "an error reply fails the command")
            #expect(rejected.lines.first?.split(separator: " ").prefix(4) == ["DEVICE", "STATUS", "COMMAND", "ID"])
            #expect(rejected.lines.count == 2)
            #expect(rejected.lines[1].contains("error"))
            #expect(rejected.lines[1].contains("no_active_workout"))

            let sent = try daemon.ctlJSON(
                [
                    "send", "--device", wearable.devicePath,
                    CommandLines.start(id: 9, location: "Zürich", date: "2020-03-16T19:45:13Z", intensity: 3),
                ],
                as: SendResult.self
            )
            let result = try #require(sent.first)
            #expect(result.device == wearable.devicePath)
            #expect(result.reply.id == .integer(9))
            guard case .ok(.workoutStarted) = result.reply.outcome else {
                Issue.record("expected workout_started, got \(result.reply)")
                return
            }
            // The wearable itself now sees the workout it did not start.
            #expect(
                try wearable.request(CommandLines.start(location: "X", date: "2020-03-16T19:45:13Z", intensity: 3))
                    .contains("workout_already_active")
            )
            #expect(
                wearable.drain(for: .milliseconds(50)).isEmpty,
                "a sent command's reply goes to workoutctl, not the device"
            )
        }
    }

    @Test func metrics() async throws {
        try await withDaemon { wearable, daemon in
            let text = try daemon.ctl(["metrics"])
            #expect(text.status == 0)
            #expect(text.stdout.contains(#"workoutd_commands_total{type="start_workout",outcome="ok"} 1"#))
            #expect(text.stdout.contains(#"workoutd_commands_total{type="end_workout",outcome="ok"} 2"#))
            #expect(text.stdout.contains(#"workoutd_commands_total{type="invalid",outcome="malformed_json"} 1"#))
            #expect(text.stdout.contains("workoutd_invalid_lines_total 1"))
            #expect(text.stdout.contains("workoutd_replays_total 1"))
            #expect(text.stdout.contains("# TYPE workoutd_handler_duration_seconds histogram"))

            let samples = try daemon.ctlJSON(["metrics"], as: Sample.self)
            func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
                samples.first { $0.name == name && $0.labels == labels }?.value
            }
            #expect(value("workoutd_handler_duration_seconds_count") == 5)
            #expect((value("workoutd_device_bytes_total", ["direction": "in"]) ?? 0) >= 200)
            #expect((value("workoutd_device_bytes_total", ["direction": "out"]) ?? 0) >= 200)
            #expect(value("workoutd_commands_total", ["type": "share_workout", "outcome": "ok"]) == 1)
        }
    }

    @Test func badRequestsGetErrorsAndLeaveTheDeviceAlone() async throws {
        try await withDaemon { wearable, daemon in
            let connection = try daemon.connect()
            try connection.write(Array("garbage\n".utf8))
            try connection.write(Array(#"{"id":"a","method":"reboot"}"#.utf8) + [10])
            try connection.write(Array(#"{"id":7,"method":"workouts","params":{"limit":"ten"}}"#.utf8) + [10])
            try connection.write(Array(#"{"id":8,"method":"send","params":{"device":"x"}}"#.utf8) + [10])
            try connection.write(Array(repeating: UInt8(ascii: "x"), count: 70_000) + [10])
            let decoder = ControlSocket.makeDecoder()
            var replies: [ControlResponse<Subscription>] = []
            for _ in 0..<5 {
                let line = try #require(try connection.readLine(timeout: .seconds(5)))
                replies.append(try decoder.decode(ControlResponse<Subscription>.self, from: Data(line)))
            }
            func failure(_ reply: ControlResponse<Subscription>) -> ControlError? {
                if case .failure(let error) = reply.outcome { error } else { nil }
            }
            #expect(replies.map(\.id) == [nil, .string("a"), .integer(7), .integer(8), nil])
            #expect(
                replies.map { failure($0)?.code } == [
                    .parseError, .unknownMethod, .invalidParams, .invalidParams, .requestTooLong,
                ]
            )
            #expect(failure(replies[2])?.message.contains("params.limit") == true)
            // The same connection still works, and so does the device.
            let status: StatusReport = try connection.call(.status)
            #expect(status.devicesConnected == 1)
            #expect(try wearable.request(CommandLines.end()).contains("no_active_workout"))
        }
    }

    /// A sample as `workoutctl metrics --json` prints it.
    struct Sample: Decodable {
        var name: String
        var labels: [String: String]
        var value: Double
    }
}
