import ControlProtocol
import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

import class WorkoutctlCommands.ControlConnection

/// SIGHUP re-reads the configuration file.
///
/// A valid one takes effect without cutting off open devices, an invalid one is rejected with its reason and the old
/// one stays in force.
@Suite(.serialized) struct ReloadTests {
    private func devicesYAML(_ paths: [String], extra: String = "") -> String {
        "devices:\n" + paths.map { "  - \($0)\n" }.joined() + extra
    }

    private func reload(_ daemon: ControlledDaemon, expecting message: String, occurrence: Int) throws {
        daemon.daemon.signal(SIGHUP)
        let deadline = ContinuousClock.now + .seconds(10)
        while daemon.daemon.log.components(separatedBy: message).count - 1 < occurrence {
            guard ContinuousClock.now < deadline, daemon.daemon.process.isRunning else {
                throw TestingError("no '\(message)' (#\(occurrence)) after SIGHUP:\n\(daemon.daemon.log)")
            }
            usleep(10_000)
        }
    }

    private let start = CommandLines.start(date: "2020-03-16T19:45:13Z")

    @Test func validConfigurationServesNewDevicesAndKeepsOpenOnes() throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        let daemon = try ControlledDaemon(configuration: devicesYAML([first.devicePath]))
        try daemon.waitUntilConnected(first.devicePath)
        #expect(try first.request(start).contains("ok"), "a workout in progress across the reload")

        try devicesYAML([first.devicePath, second.devicePath]).write(
            toFile: daemon.configFile,
            atomically: true,
            encoding: .utf8
        )
        try reload(daemon, expecting: "configuration reloaded", occurrence: 1)
        try daemon.waitUntilConnected(second.devicePath)
        #expect(try second.request(start).contains("ok"))

        let devices = try daemon.ctlJSON(["devices"], as: DeviceReport.self)
        let kept = try #require(devices.first { $0.node == first.devicePath })
        #expect(kept.connected && kept.connections == 1, "the open device was not reconnected")
        #expect(try first.request(CommandLines.end()).contains("ok"), "and its workout is intact")
        let status = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first)
        #expect(status.counters.reloads == 1 && status.counters.rejectedReloads == 0)
        #expect(try daemon.ctl(["metrics"]).stdout.contains(#"workoutd_config_reloads_total{result="applied"} 1"#))
    }

    @Test func invalidConfigurationIsRejectedAndTheOldOneStays() throws {
        let first = try SimulatedWearable()
        let ignored = try SimulatedWearable()
        let daemon = try ControlledDaemon(configuration: devicesYAML([first.devicePath]))
        try daemon.waitUntilConnected(first.devicePath)

        // A new device beside a bad value: nothing of this file may take effect.
        try devicesYAML([first.devicePath, ignored.devicePath], extra: "serial:\n  max_line_bytes: 5\n")
            .write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        try reload(daemon, expecting: "configuration reload rejected", occurrence: 1)
        #expect(daemon.daemon.log.contains("serial.max_line_bytes"), "the log names the bad key")

        // Not YAML at all.
        try "devices: [unclosed\n".write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        try reload(daemon, expecting: "configuration reload rejected", occurrence: 2)

        #expect(daemon.daemon.process.isRunning)
        let devices = try daemon.ctlJSON(["devices"], as: DeviceReport.self)
        #expect(devices.map(\.node) == [first.devicePath], "the rejected file's device was not attached")
        #expect(devices.first?.connections == 1)
        #expect(try first.request(start).contains("ok"), "the device is still served under the old configuration")
        // The old maximum line length (4096) is still in force, not the rejected 5.
        #expect(try first.request(CommandLines.end(id: "a-longer-line-than-five-bytes")).contains(#""status":"ok""#))
        let status = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first)
        #expect(status.counters.reloads == 0 && status.counters.rejectedReloads == 2)
    }

    @Test func newShareSinksApplyToTheNextDelivery() throws {
        let wearable = try SimulatedWearable()
        let daemon = try ControlledDaemon(configuration: devicesYAML([wearable.devicePath]))
        try daemon.waitUntilConnected(wearable.devicePath)
        let state = daemon.directory.appendingPathComponent("state")
        let outbox = state.appendingPathComponent("outbox/twitter")
        let delivered = daemon.directory.appendingPathComponent("exec-delivered")
        try FileManager.default.createDirectory(at: delivered, withIntermediateDirectories: true)
        func files(_ folder: URL) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }
        }
        func waitFor(_ folder: URL, count: Int) throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while files(folder).count < count {
                guard ContinuousClock.now < deadline else {
                    throw TestingError("\(folder.path) has \(files(folder)):\n\(daemon.daemon.log)")
                }
                usleep(20_000)
            }
        }

        #expect(try wearable.request(start).contains("ok"))
        #expect(try wearable.request(CommandLines.end()).contains("ok"))
        #expect(try wearable.request(CommandLines.share()).contains("ok"))
        try waitFor(outbox, count: 1)  // the default sink spools

        let sink =
            "shares:\n  twitter:\n    sink: exec\n    command: [/bin/sh, -c, 'cat > \"$0/share-$$.json\"', \(delivered.path)]\n"
        try devicesYAML([wearable.devicePath], extra: sink).write(
            toFile: daemon.configFile,
            atomically: true,
            encoding: .utf8
        )
        try reload(daemon, expecting: "configuration reloaded", occurrence: 1)
        #expect(try wearable.request(CommandLines.share()).contains("ok"))
        try waitFor(delivered, count: 1)
        #expect(files(outbox).count == 1, "the second share went through the new exec sink, not the spool")
        // The file appears when `cat` opens it; its last byte (the payload's newline) says it is complete.
        let file = delivered.appendingPathComponent(files(delivered)[0])
        let deadline = ContinuousClock.now + .seconds(10)
        var payload = ""
        while !payload.hasSuffix("\n"), ContinuousClock.now < deadline {
            payload = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            if !payload.hasSuffix("\n") { usleep(20_000) }
        }
        #expect(payload.contains("Gym"), "the workout JSON reached the command's stdin: \(payload)")
    }

    /// log_level and the serial limits apply on reload, to open connections too.
    ///
    /// A restart-only key is named, never applied.
    @Test func liveKeysApplyAndRestartOnlyKeysWaitForARestart() throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        // No --log-level flag: the file's level is the one in force, so a reload can change it.
        let daemon = try ControlledDaemon(
            configuration: devicesYAML([first.devicePath], extra: "log_level: info\n"),
            logLevel: nil
        )
        try daemon.waitUntilConnected(first.devicePath)
        #expect(try first.request(start).contains("ok"))

        let debugFile = devicesYAML(
            [first.devicePath, second.devicePath],
            extra:
                "log_level: debug\nserial:\n  max_line_bytes: 128\n  reply_line_ending: crlf\nstorage:\n  backend: memory\nshutdown:\n  drain_timeout_ms: 100\n"
        )
        try debugFile.write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        try reload(daemon, expecting: "configuration reloaded", occurrence: 1)
        #expect(!daemon.daemon.log.contains("command acknowledged"), "per-command lines are debug: not logged at info")

        // log_level: debug and serial.reply_line_ending: crlf are in force for a device connected before the reload.
        let ended = try first.request(CommandLines.end())
        #expect(ended.contains("ok") && ended.hasSuffix("\r"), "the reply ends in CRLF now: \(ended.debugDescription)")
        try daemon.daemon.waitForLog("command acknowledged")

        // serial.max_line_bytes: 128 frames the lines of a device connected after the reload...
        try daemon.waitUntilConnected(second.devicePath)
        let long =
            #"{"command_type":"start_workout","location":"\#(String(repeating: "x", count: 80))","intensityLevel":5}"#
        #expect(try second.request(long).contains("line_too_long"), "a line longer than the new limit")
        #expect(try second.request(start).contains(#""status":"ok""#))
        // ... and those of the device connected before it, without reconnecting it.
        #expect(try first.request(long).contains("line_too_long"), "the open connection frames with the new limit")
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
        #expect(daemon.daemon.log.components(separatedBy: notice).count - 1 == 1)
        #expect(daemon.daemon.log.contains("shutdown.drain_timeout_ms changed; takes effect after restart"))
        #expect(daemon.daemon.log.contains("pending_restart=shutdown.drain_timeout_ms,storage.backend"))
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

        // The same file again: the pending key is not announced a second time. Back to info: no debug lines.
        try reload(daemon, expecting: "configuration reloaded", occurrence: 2)
        #expect(daemon.daemon.log.components(separatedBy: notice).count - 1 == 1)
        try debugFile.replacingOccurrences(of: "log_level: debug", with: "log_level: info")
            .write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        try reload(daemon, expecting: "configuration reloaded", occurrence: 3)
        let acknowledged = daemon.daemon.log.components(separatedBy: "command acknowledged").count
        #expect(try first.request(start).contains("ok"))
        // A later line in the same stream: anything the command logged is in the log by then.
        try reload(daemon, expecting: "configuration reloaded", occurrence: 4)
        #expect(
            daemon.daemon.log.components(separatedBy: "command acknowledged").count == acknowledged,
            "log_level: info again: no per-command lines"
        )

        // Reverting the restart-only key clears the pending list.
        try devicesYAML([first.devicePath, second.devicePath]).write(
            toFile: daemon.configFile,
            atomically: true,
            encoding: .utf8
        )
        try reload(daemon, expecting: "configuration reloaded", occurrence: 5)
        #expect(try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first).pendingRestart.isEmpty)
        #expect(!(try daemon.ctl(["status"]).stdout.contains("pending restart")))
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
    @Test func baudAndReconnectDelaysApplyAtTheNextOpenAfterAReload() throws {
        let first = try SimulatedWearable()
        let second = try SimulatedWearable()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "workoutd-missing-\(UUID().uuidString)"
        ).path
        let daemon = try ControlledDaemon(
            configuration: devicesYAML(
                [first.devicePath, missing],
                extra: "reconnect:\n  initial_delay_ms: 50\n  max_delay_ms: 100\n"
            ),
            logLevel: "debug"
        )
        try daemon.waitUntilConnected(first.devicePath)
        #expect(try speed(of: first) == speed_t(B115200), "the default rate")
        try daemon.daemon.waitForLog("retry_in=100ms")
        #expect(!daemon.daemon.log.contains("retry_in=300ms"))

        try devicesYAML(
            [first.devicePath, missing, second.devicePath],
            extra: "serial:\n  baud: 9600\nreconnect:\n  initial_delay_ms: 300\n  max_delay_ms: 300\n"
        )
        .write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        try reload(daemon, expecting: "configuration reloaded", occurrence: 1)
        try daemon.waitUntilConnected(second.devicePath)
        #expect(try speed(of: second) == speed_t(B9600), "the device opened after the reload runs at the new rate")
        #expect(try second.request(start).contains("ok"))
        #expect(try speed(of: first) == speed_t(B115200), "the open device is not reopened for it")
        // A hangup of the device that was open before the reload: the daemon reopens its node, at the new rate.
        let slave = open(first.devicePath, O_RDWR | O_NOCTTY | O_NONBLOCK)
        #expect(slave >= 0 && ioctl(slave, UInt(TIOCVHANGUP)) == 0, "hang up \(first.devicePath)")
        close(slave)
        let deadline = ContinuousClock.now + .seconds(30)
        while try daemon.ctlJSON(["devices"], as: DeviceReport.self).first(where: { $0.node == first.devicePath })
            .map({ $0.connected && $0.connections == 2 }) != true
        {
            guard ContinuousClock.now < deadline else {
                throw TestingError("no reconnect after the hangup:\n\(daemon.daemon.log)")
            }
            usleep(20_000)
        }
        #expect(try speed(of: first) == speed_t(B9600), "reopened after the reload: the new rate")
        #expect(try first.request(CommandLines.end()).contains("no_active_workout"), "and served")
        // The node attached before the reload is retried with the new delays (300 ms, never seen before it).
        try daemon.daemon.waitForLog("retry_in=300ms")
        let retried = daemon.daemon.log.split(separator: "\n").first { $0.contains("retry_in=300ms") }
        #expect(retried?.contains("node=\(missing)") == true, "\(String(describing: retried))")
    }
}
