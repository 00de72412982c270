import ControlProtocol
import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

import class WorkoutctlCommands.ControlConnection

/// SIGHUP re-reads the configuration file (in process: a reload re-reads the in-memory document).
///
/// A valid one takes effect without cutting off open devices, an invalid one is rejected with its reason and the old
/// one stays in force.
@Suite(.serialized) struct ReloadTests {
    private func devicesYAML(_ paths: [String], extra: String = "") -> String {
        "devices:\n" + paths.map { "  - \($0)\n" }.joined() + extra
    }

    /// Reloads and checks the daemon said `message` for the `occurrence`th time.
    ///
    /// With `configuration`, that replaces the configuration first.
    private func reload(
        _ daemon: TestDaemon,
        to configuration: String? = nil,
        expecting message: String,
        occurrence: Int
    ) async throws {
        if let configuration {
            try await daemon.reload(configuration: configuration)
        } else {
            try await daemon.reload()
        }
        #expect(
            daemon.log.components(separatedBy: message).count - 1 == occurrence,
            "'\(message)' #\(occurrence) after the reload:\n\(daemon.log)"
        )
    }

    private let start = CommandLines.start(date: "2020-03-16T19:45:13Z")

    @Test(arguments: DaemonTestMode.inLane)
    func validConfigurationServesNewDevicesAndKeepsOpenOnes(mode: DaemonTestMode) async throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        try await DaemonTestHarness.run(mode, configuration: devicesYAML([first.devicePath])) { daemon in
            try daemon.waitUntilConnected(first.devicePath)
            #expect(try first.request(start).contains("ok"), "a workout in progress across the reload")

            try await reload(
                daemon,
                to: devicesYAML([first.devicePath, second.devicePath]),
                expecting: "configuration reloaded",
                occurrence: 1
            )
            try daemon.waitUntilConnected(second.devicePath)
            #expect(try second.request(start).contains("ok"))

            let devices = try daemon.ctlJSON(["devices"], as: DeviceReport.self)
            let kept = try #require(devices.first { $0.node == first.devicePath })
            #expect(kept.connected && kept.connections == 1, "the open device was not reconnected")
            #expect(try first.request(CommandLines.end()).contains("ok"), "and its workout is intact")
            let status = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first)
            #expect(status.counters.reloads == 1 && status.counters.rejectedReloads == 0)
            #expect(
                try daemon.ctl(["metrics"]).stdout.contains(
                    #"workoutd_config_reloads_total{result="applied"} 1"#
                )
            )
        }
    }

    @Test(arguments: DaemonTestMode.inLane)
    func invalidConfigurationIsRejectedAndTheOldOneStays(mode: DaemonTestMode) async throws {
        let first = try SimulatedWearable()
        let ignored = try SimulatedWearable()
        try await DaemonTestHarness.run(mode, configuration: devicesYAML([first.devicePath])) { daemon in
            try daemon.waitUntilConnected(first.devicePath)

            // A new device beside a bad value: nothing of this configuration may take effect.
            try await reload(
                daemon,
                to: devicesYAML([first.devicePath, ignored.devicePath], extra: "serial:\n  max_line_bytes: 5\n"),
                expecting: "configuration reload rejected",
                occurrence: 1
            )
            #expect(daemon.log.contains("serial.max_line_bytes"), "the log names the bad key")

            // Not YAML at all.
            try await reload(
                daemon,
                to: "devices: [unclosed\n",
                expecting: "configuration reload rejected",
                occurrence: 2
            )

            #expect(daemon.isRunning)
            let devices = try daemon.ctlJSON(["devices"], as: DeviceReport.self)
            #expect(devices.map(\.node) == [first.devicePath], "the rejected file's device was not attached")
            #expect(devices.first?.connections == 1)
            #expect(
                try first.request(start).contains("ok"),
                "the device is still served under the old configuration"
            )
            // The old maximum line length (4096) is still in force, not the rejected 5.
            #expect(
                try first.request(CommandLines.end(id: "a-longer-line-than-five-bytes"))
                    .contains(#""status":"ok""#)
            )
            let status = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first)
            #expect(status.counters.reloads == 0 && status.counters.rejectedReloads == 2)
        }
    }

    @Test(arguments: DaemonTestMode.inLane)
    func newShareSinksApplyToTheNextDelivery(mode: DaemonTestMode) async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(mode, configuration: devicesYAML([wearable.devicePath])) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            let outbox = daemon.stateDirectory.appendingPathComponent("outbox/twitter")
            let delivered = daemon.directory.appendingPathComponent("exec-delivered")
            try FileManager.default.createDirectory(at: delivered, withIntermediateDirectories: true)
            func files(_ folder: URL) -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                    .filter { !$0.hasPrefix(".") }
            }
            func waitFor(_ folder: URL, count: Int) async throws {
                let deadline = ContinuousClock.now + .seconds(10)
                while files(folder).count < count {
                    guard ContinuousClock.now < deadline else {
                        throw TestingError("\(folder.path) has \(files(folder)):\n\(daemon.log)")
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }

            #expect(try wearable.request(start).contains("ok"))
            #expect(try wearable.request(CommandLines.end()).contains("ok"))
            #expect(try wearable.request(CommandLines.share()).contains("ok"))
            try await waitFor(outbox, count: 1)  // the default sink spools

            let sink =
                "shares:\n  twitter:\n    sink: exec\n    command: [/bin/sh, -c, 'cat > \"$0/share-$$.json\"', \(delivered.path)]\n"
            try await reload(
                daemon,
                to: devicesYAML([wearable.devicePath], extra: sink),
                expecting: "configuration reloaded",
                occurrence: 1
            )
            #expect(try wearable.request(CommandLines.share()).contains("ok"))
            try await waitFor(delivered, count: 1)
            #expect(files(outbox).count == 1, "the second share went through the new exec sink, not the spool")
            // The file appears when `cat` opens it; its last byte (the payload's newline) says it is complete.
            let file = delivered.appendingPathComponent(files(delivered)[0])
            let deadline = ContinuousClock.now + .seconds(10)
            var payload = ""
            while !payload.hasSuffix("\n"), ContinuousClock.now < deadline {
                payload = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
                if !payload.hasSuffix("\n") { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(payload.contains("Gym"), "the workout JSON reached the command's stdin: \(payload)")
        }
    }

    /// log_level and the serial limits apply on reload, to open connections too.
    ///
    /// A restart-only key is named, never applied.
    @Test func liveKeysApplyAndRestartOnlyKeysWaitForARestart() async throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        // No --log-level flag: the configuration's level is the one in force, so a reload can change it.
        try await DaemonTestHarness.run(
            .inProcess,
            configuration: devicesYAML([first.devicePath], extra: "log_level: info\n"),
            logLevel: nil
        ) { daemon in
            try daemon.waitUntilConnected(first.devicePath)
            #expect(try first.request(start).contains("ok"))

            let debugFile = devicesYAML(
                [first.devicePath, second.devicePath],
                extra:
                    "log_level: debug\nserial:\n  max_line_bytes: 128\n  reply_line_ending: crlf\nstorage:\n  backend: memory\nshutdown:\n  drain_timeout_ms: 100\n"
            )
            try await reload(daemon, to: debugFile, expecting: "configuration reloaded", occurrence: 1)
            // The start's reply is logged (or not) just after it is written: only what came before the reload is at info.
            let atInfo = daemon.log.components(separatedBy: "reloading configuration").first ?? ""
            #expect(!atInfo.contains("command acknowledged"), "per-command lines are debug: not logged at info")

            // log_level: debug and serial.reply_line_ending: crlf are in force for a device connected before it.
            let ended = try first.request(CommandLines.end())
            #expect(
                ended.contains("ok") && ended.hasSuffix("\r"),
                "the reply ends in CRLF now: \(ended.debugDescription)"
            )
            try daemon.waitForLog("command_type=end_workout")
            #expect(
                daemon.log.split(separator: "\n").contains {
                    $0.contains("command acknowledged") && $0.contains("command_type=end_workout")
                },
                "the end is logged at debug"
            )

            // serial.max_line_bytes: 128 frames the lines of a device connected after the reload...
            try daemon.waitUntilConnected(second.devicePath)
            let long =
                #"{"command_type":"start_workout","location":"\#(String(repeating: "x", count: 80))","intensityLevel":5}"#
            #expect(try second.request(long).contains("line_too_long"), "a line longer than the new limit")
            #expect(try second.request(start).contains(#""status":"ok""#))
            // ... and those of the device connected before it, without reconnecting it.
            #expect(
                try first.request(long).contains("line_too_long"),
                "the open connection frames with the new limit"
            )
            let kept = try #require(
                try daemon.ctlJSON(["devices"], as: DeviceReport.self).first { $0.node == first.devicePath }
            )
            #expect(kept.connected && kept.connections == 1, "the open device was not reconnected to get it")
            let sent = try daemon.ctl(["send", "--device", first.devicePath, long])
            #expect(
                sent.status == 1 && sent.stdout.contains("line_too_long"),
                "workoutctl send holds a line to the new limit too: \(sent)"
            )

            // storage.backend changed: named once at notice and in status, never reported as applied.
            let notice = "storage.backend changed; takes effect after restart"
            #expect(daemon.log.components(separatedBy: notice).count - 1 == 1)
            #expect(daemon.log.contains("shutdown.drain_timeout_ms changed; takes effect after restart"))
            #expect(daemon.log.contains("pending_restart=shutdown.drain_timeout_ms,storage.backend"))
            let status = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first)
            #expect(status.pendingRestart == ["shutdown.drain_timeout_ms", "storage.backend"])
            let row = try daemon.ctl(["status"]).lines.first { $0.hasPrefix("pending restart") }
            #expect(
                row?.hasSuffix(" shutdown.drain_timeout_ms, storage.backend (takes effect after restart)") == true,
                "\(String(describing: row))"
            )
            #expect(
                try daemon.ctlJSON(["workouts"], as: WorkoutRecord.self).count == 2,
                "the workouts from before and after the reload are in one store: the backend did not change"
            )

            // The same configuration again: the pending key is not announced a second time. Back to info: no
            // debug lines.
            try await reload(daemon, expecting: "configuration reloaded", occurrence: 2)
            #expect(daemon.log.components(separatedBy: notice).count - 1 == 1)
            try await reload(
                daemon,
                to: debugFile.replacingOccurrences(of: "log_level: debug", with: "log_level: info"),
                expecting: "configuration reloaded",
                occurrence: 3
            )
            let acknowledged = daemon.log.components(separatedBy: "command acknowledged").count
            #expect(try first.request(start).contains("ok"))
            // A later line in the same stream: anything the command logged is in the log by then.
            try await reload(daemon, expecting: "configuration reloaded", occurrence: 4)
            #expect(
                daemon.log.components(separatedBy: "command acknowledged").count == acknowledged,
                "log_level: info again: no per-command lines"
            )

            // Reverting the restart-only key clears the pending list.
            try await reload(
                daemon,
                to: devicesYAML([first.devicePath, second.devicePath]),
                expecting: "configuration reloaded",
                occurrence: 5
            )
            #expect(
                try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first).pendingRestart.isEmpty
            )
            #expect(!(try daemon.ctl(["status"]).stdout.contains("pending restart")))
        }
    }

    /// The output speed of the pty pair `wearable` sits on.
    ///
    /// TCGETS on a Linux pty master reports the slave's termios (tty_mode_ioctl uses the linked tty), i.e. the rate the
    /// daemon set when it opened the node.
    private func speed(of wearable: SimulatedWearable) throws -> speed_t {
        var settings = termios()
        guard tcgetattr(wearable.fd, &settings) == 0 else {
            throw TestingError("tcgetattr: \(String(cString: strerror(errno)))")
        }
        return cfgetospeed(&settings)
    }

    /// serial.baud and reconnect.* apply at a device's next open.
    ///
    /// A device the reload adds opens at the new rate, one open before it keeps its rate until it is reopened (after a
    /// hangup), and a configured node that cannot be opened yet is retried with the new delays.
    @Test func baudAndReconnectDelaysApplyAtTheNextOpenAfterAReload() async throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "workoutd-missing-\(UUID().uuidString)"
        ).path
        try await DaemonTestHarness.run(
            .inProcess,
            configuration: devicesYAML(
                [first.devicePath, missing],
                extra: "reconnect:\n  initial_delay_ms: 50\n  max_delay_ms: 100\n"
            ),
            logLevel: "debug"
        ) { daemon in
            try daemon.waitUntilConnected(first.devicePath)
            #expect(try speed(of: first) == speed_t(B115200), "the default rate")
            try daemon.waitForLog("retry_in=100ms")
            #expect(!daemon.log.contains("retry_in=300ms"))

            try await reload(
                daemon,
                to: devicesYAML(
                    [first.devicePath, missing, second.devicePath],
                    extra: "serial:\n  baud: 9600\nreconnect:\n  initial_delay_ms: 300\n  max_delay_ms: 300\n"
                ),
                expecting: "configuration reloaded",
                occurrence: 1
            )
            try daemon.waitUntilConnected(second.devicePath)
            #expect(
                try speed(of: second) == speed_t(B9600),
                "the device opened after the reload runs at the new rate"
            )
            #expect(try second.request(start).contains("ok"))
            #expect(try speed(of: first) == speed_t(B115200), "the open device is not reopened for it")
            // A hangup of the device that was open before the reload: the daemon reopens its node, at the new rate.
            let slave = open(first.devicePath, O_RDWR | O_NOCTTY | O_NONBLOCK)
            #expect(slave >= 0 && ioctl(slave, UInt(TIOCVHANGUP)) == 0, "hang up \(first.devicePath)")
            close(slave)
            try daemon.waitUntilConnected(first.devicePath, connections: 2)
            #expect(try speed(of: first) == speed_t(B9600), "reopened after the reload: the new rate")
            #expect(try first.request(CommandLines.end()).contains("no_active_workout"), "and served")
            // The node attached before the reload is retried with the new delays (300 ms, never seen before it).
            try daemon.waitForLog("retry_in=300ms")
            let retried = daemon.log.split(separator: "\n").first { $0.contains("retry_in=300ms") }
            #expect(retried?.contains("node=\(missing)") == true, "\(String(describing: retried))")
        }
    }
}
