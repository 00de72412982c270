import ControlProtocol
import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// What a device sends reaches operators' terminals and logs as text, never as terminal control.
///
/// The protocol now refuses control and bidi characters, so these tests put them where they can still come from:
/// rows an older version stored (written into the SQLite database directly), values the daemon's error
/// messages quote back, and a device node's name.
@Suite(.serialized) struct HostileTextOutputTests {
    /// `Gym` ESC`[31mRED` ESC`[0m` CR `FAKE ROW` NEL RLO `\`.
    ///
    /// Colours, a carriage return that overwrites the row, C1 next line and a right-to-left override, as SQL (`char()`
    /// takes code points).
    static let storedLocationSQL =
        "'Gym' || char(27) || '[31mRED' || char(27) || '[0m' || char(13) || 'FAKE ROW' || char(133) || char(8238) || 'x\\'"
    static let storedLocation = "Gym\u{1B}[31mRED\u{1B}[0m\rFAKE ROW\u{85}\u{202E}x\\"
    static let shownLocation = #"Gym\x1b[31mRED\x1b[0m\rFAKE ROW\u{85}\u{202e}x\\"#

    /// Nothing a terminal acts on.
    ///
    /// No C0 control but the line feeds ending lines, no DEL, C1 or bidi control.
    static func isInert(_ text: String) -> Bool {
        !text.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029:
                true
            default: false
            }
        }
    }

    static func sqlite(_ database: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", database, sql]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestingError("sqlite3 \(sql) exited \(process.terminationStatus)")
        }
    }

    @Test(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes"))
    func rowsStoredByAnOlderVersionPrintEscapedEverywhere() throws {
        let wearable = try SimulatedWearable()
        let first = try ControlledDaemon(devices: [wearable.devicePath])
        try withExtendedLifetime(first) {
            try first.waitUntilConnected(wearable.devicePath)
            #expect(try wearable.request(CommandLines.start(id: 1, location: "OLD-ROW")).contains(#""status":"ok""#))
            #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
            #expect(try wearable.request(CommandLines.share(id: 3)).contains(#""status":"ok""#))
            #expect(try wearable.request(CommandLines.start(id: 4, location: "ACTIVE-ROW")).contains(#""status":"ok""#))
            first.daemon.stop()

            // What an older version could have stored: the protocol once accepted these characters.
            let state = first.directory.appendingPathComponent("state")
            let database = try #require(
                try FileManager.default.contentsOfDirectory(atPath: state.path).first { $0.hasSuffix(".sqlite") }
            )
            let path = state.appendingPathComponent(database).path
            try Self.sqlite(path, "UPDATE workout SET location = \(Self.storedLocationSQL) WHERE location = 'OLD-ROW'")
            // The session reads its active workout from this row (since migration v7 it keeps no copy).
            try Self.sqlite(
                path,
                "UPDATE workout SET location = replace(location, 'ACTIVE-ROW', 'lane ' || char(8238) || '4 ' || char(8294) || 'evil')"
            )
            try Self.sqlite(
                path,
                "UPDATE share SET lastError = 'HTTP 500' || char(27) || ']0;owned' || char(7) || char(10) || 'ok'"
            )

            // `workoutd workouts`, offline: the table and its JSON.
            let offline = try DaemonProcess(arguments: ["workouts", "--state-dir", state.path])
            #expect(try offline.waitForExit() == 0)
            #expect(
                Self.isInert(offline.log),
                "workoutd workouts printed raw controls: \(offline.log.debugDescription)"
            )
            #expect(offline.log.contains(Self.shownLocation), "\(offline.log)")
            #expect(offline.log.contains(#"lane \u{202e}4 \u{2066}evil"#), "\(offline.log)")
            #expect(offline.log.split(separator: "\n").count == 3, "a header and one line per row: \(offline.log)")
            let offlineJSON = try DaemonProcess(arguments: ["workouts", "--state-dir", state.path, "--json"])
            #expect(try offlineJSON.waitForExit() == 0)
            #expect(
                Self.isInert(offlineJSON.log),
                "workoutd workouts --json printed raw controls: \(offlineJSON.log.debugDescription)"
            )
            #expect(
                offlineJSON.log.contains(#"Gym\u001b[31mRED\u001b[0m\rFAKE ROW\u0085\u202ex\\"#),
                "\(offlineJSON.log)"
            )
            let offlineRecords = try offlineJSON.log.split(separator: "\n").map {
                try Self.decodeStored(WorkoutRecord.self, from: String($0))
            }
            #expect(
                Set(offlineRecords.map(\.location)) == [Self.storedLocation, "lane \u{202E}4 \u{2066}evil"],
                "the JSON still reads back as stored"
            )
            let sharesOffline = try DaemonProcess(arguments: ["shares", "--state-dir", state.path])
            #expect(try sharesOffline.waitForExit() == 0)
            #expect(
                Self.isInert(sharesOffline.log) && sharesOffline.log.contains(#"HTTP 500\x1b]0;owned\x07\nok"#),
                "\(sharesOffline.log)"
            )

            // The daemon serves the old rows: `workoutctl workouts`, `shares` and `events`.
            let daemon = try ControlledDaemon(devices: [wearable.devicePath], directory: first.directory)
            try daemon.waitUntilConnected(wearable.devicePath)
            let table = try daemon.ctl(["workouts"])
            #expect(table.status == 0)
            #expect(
                Self.isInert(table.stdout),
                "workoutctl workouts printed raw controls: \(table.stdout.debugDescription)"
            )
            #expect(table.lines.count == 3 && table.stdout.contains(Self.shownLocation), "\(table.stdout)")
            let json = try daemon.ctl(["workouts", "--json"])
            #expect(
                Self.isInert(json.stdout),
                "workoutctl workouts --json printed raw controls: \(json.stdout.debugDescription)"
            )
            #expect(
                Set(try daemon.ctlJSON(["workouts"], as: WorkoutRecord.self).map(\.location)) == [
                    Self.storedLocation, "lane \u{202E}4 \u{2066}evil",
                ]
            )
            // (The delivery worker may already have retried the share and replaced the stored error.)
            let shares = try daemon.ctl(["shares"])
            #expect(
                Self.isInert(shares.stdout),
                "workoutctl shares printed raw controls: \(shares.stdout.debugDescription)"
            )

            // Ending the old active workout sends its stored location through the event stream.
            let events = try Workoutctl.start(["--socket", daemon.socket, "events", "--json"])
            defer { _ = try? events.interrupt() }
            let header = try Workoutctl.start(["--socket", daemon.socket, "events"])
            defer { _ = try? header.interrupt() }
            _ = try header.readLine()
            try waitForSubscribers(2) { try daemon.ctlJSON(["status"], as: StatusReport.self) }
            #expect(try wearable.request(CommandLines.end(id: 5)).contains(#""status":"ok""#))
            var lines: [String] = []
            while !(lines.last?.contains("workout_ended") ?? false) { lines.append(try events.readLine()) }
            let ended = try #require(lines.last)
            #expect(Self.isInert(ended), "workoutctl events --json printed raw controls: \(ended.debugDescription)")
            #expect(ended.contains(#"lane \u202e4 \u2066evil"#), "\(ended)")
            let decoded = try ControlSocket.makeDecoder().decode(ControlEvent.self, from: Data(ended.utf8))
            guard case .workoutEnded(let workout) = decoded.detail else {
                Issue.record("not a workout_ended event: \(ended)")
                return
            }
            #expect(workout.location == "lane \u{202E}4 \u{2066}evil")
            let tableLines = try (0..<3).map { _ in try header.readLine() }
            #expect(tableLines.allSatisfy(Self.isInert), "\(tableLines)")
        }
    }

    /// Error messages quote what the device sent (`got '…'`).
    ///
    /// The reply is JSON and safe, but the event stream and `workoutctl send` print the decoded message, so they must
    /// escape it.
    @Test func quotedInputInRepliesPrintsEscapedInEventsAndSend() async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(.inProcess, devices: [wearable.devicePath]) { daemon in
            try quotedInputInReplies(daemon, wearable: wearable)
        }
    }

    private func quotedInputInReplies(_ daemon: TestDaemon, wearable: SimulatedWearable) throws {
        try daemon.waitUntilConnected(wearable.devicePath)
        let events = try Workoutctl.start(["--socket", daemon.socket, "events"])
        defer { _ = try? events.interrupt() }
        _ = try events.readLine()
        try waitForSubscribers(1) { try daemon.ctlJSON(["status"], as: StatusReport.self) }

        let hostile = #"{"command_type":"share_workout","service":"\u001b[2J\u001b[31mX\r\u0085\u202eY","id":1}"#
        let reply = try wearable.request(hostile)
        #expect(
            reply.contains(#"got '\u001b[2J\u001b[31mX\r\u0085\u202eY'"#)
                || reply.contains(#"got '\u001b[2J\u001b[31mX\r"#),
            "\(reply)"
        )
        let lines = try (0..<2).map { _ in try events.readLine() }
        #expect(
            lines.allSatisfy(Self.isInert),
            "workoutctl events printed raw controls: \(lines.map(\.debugDescription))"
        )
        #expect(lines[1].contains(#"got '\x1b[2J\x1b[31mX\r\u{85}\u{202e}Y'"#), "\(lines[1])")

        let sent = try daemon.ctl(["send", "--device", wearable.devicePath, hostile])
        #expect(sent.status == 1)
        #expect(Self.isInert(sent.stdout), "workoutctl send printed raw controls: \(sent.stdout.debugDescription)")
        #expect(sent.stdout.contains(#"got '\x1b[2J\x1b[31mX\r\u{85}\u{202e}Y'"#), "\(sent.stdout)")
        let sentJSON = try daemon.ctl(["send", "--json", "--device", wearable.devicePath, hostile])
        #expect(
            Self.isInert(sentJSON.stdout),
            "workoutctl send --json printed raw controls: \(sentJSON.stdout.debugDescription)"
        )
        #expect(sentJSON.stdout.contains(#"\u0085\u202eY"#), "\(sentJSON.stdout)")
    }

    /// A device node named to attack (ESC, CR, a quote and `key=value`).
    ///
    /// `workoutctl devices` and the log show it escaped, and the log line's fields cannot be forged.
    @Test func aHostileDeviceNameIsEscapedInDevicesAndTheLog() async throws {
        let wearable = try SimulatedWearable()
        let links = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hostile-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: links) }
        let name = "wear\u{1B}[31mable\r\" level=critical x=\\"
        let link = links.appendingPathComponent(name).path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: wearable.devicePath)
        try await DaemonTestHarness.run(.inProcess, devices: [link]) { daemon in
            try hostileDeviceName(daemon, wearable: wearable, link: link, links: links)
        }
    }

    private func hostileDeviceName(_ daemon: TestDaemon, wearable: SimulatedWearable, link: String, links: URL) throws {
        try daemon.waitUntilConnected(link)
        #expect(try wearable.request(CommandLines.start(id: 1)).contains(#""status":"ok""#))

        let devices = try daemon.ctl(["devices"])
        #expect(
            Self.isInert(devices.stdout),
            "workoutctl devices printed raw controls: \(devices.stdout.debugDescription)"
        )
        #expect(
            devices.lines.count == 2 && devices.stdout.contains(#"wear\x1b[31mable\r" level=critical x=\\"#),
            "\(devices.stdout)"
        )

        try daemon.waitForLog("device connected")
        let connected = try #require(daemon.log.split(separator: "\n").first { $0.contains("device connected") })
        #expect(Self.isInert(daemon.log), "the log has raw controls: \(daemon.log.debugDescription)")
        #expect(
            connected.contains(#"device="\#(links.path)/wear\x1b[31mable\r\" level=critical x=\\""#),
            "\(connected)"
        )
        #expect(
            LogfmtLine.keys(connected).filter { $0 == "level" || $0 == "x" }.isEmpty,
            "a value forged a field: \(connected)"
        )
        #expect(LogfmtLine.keys(connected).contains("device"), "\(connected)")
    }

    /// Waits until `status` (workoutctl status --json) counts `count` event subscribers.
    private func waitForSubscribers(_ count: Int, status: () throws -> [StatusReport]) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try #require(try status().first).eventSubscribers < count {
            guard ContinuousClock.now < deadline else { throw TestingError("no \(count) event subscribers") }
            usleep(10_000)
        }
    }
}

extension HostileTextOutputTests {
    /// A line of `workoutd workouts --json` read back, dates as it writes them.
    static func decodeStored<T: Decodable>(_ type: T.Type, from line: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(line.utf8))
    }
}
