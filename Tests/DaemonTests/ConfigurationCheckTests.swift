import Foundation
import Testing
import WorkoutdTesting

/// A configuration mistake stops the start (exit 78) with the file, line and key, and the nearest key.
///
/// The nearest known key is suggested; `workoutd check-config` says the same without starting.
@Suite struct ConfigurationCheckTests {
    private func scratchFile(_ yaml: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "check-\(UUID().uuidString.prefix(8)).yaml"
        ).path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `workoutd arguments…` to its exit and returns the status and what it printed.
    private func workoutd(
        _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let process = try DaemonProcess(arguments: arguments, environment: environment)
        let status = try process.waitForExit()
        return (status, process.log)
    }

    static let mistakes: [(yaml: String, message: String)] = [
        (
            "log_level: info\nserail:\n  baud: 9600\n",
            ":2: configuration key 'serail': unknown key; did you mean 'serial'?"
        ),
        (
            "serial:\n  baud: 9600\n  max_line_byte: 100\n",
            ":3: configuration key 'serial.max_line_byte': unknown key; did you mean 'serial.max_line_bytes'?"
        ),
        (
            "shares:\n  twiter:\n    sink: spool\n",
            ":2: configuration key 'shares.twiter': unknown share service (known: facebook, instagram, twitter); did you mean 'shares.twitter'?"
        ),
        (
            "shares:\n  twitter:\n    sinc: spool\n",
            ":3: configuration key 'shares.twitter.sinc': unknown key; did you mean 'shares.twitter.sink'?"
        ),
        (
            "listen: 0.0.0.0:8470\n",
            ":1: configuration key 'listen': unknown key; did you mean one of 'web.listen', 'fleet.listen' (check its indentation)?"
        ),
        (
            "web:\n  baud: 9600\n",
            ":2: configuration key 'web.baud': unknown key; did you mean 'serial.baud' (check its indentation)?"
        ),
        ("devices: 5\n", ":1: configuration key 'devices': must be a list (e.g. [a, b]); got '5'"),
        ("serial:\n  baud: fast\n", ":2: configuration key 'serial.baud': must be an integer; got 'fast'"),
        (
            "discovery:\n  enabled: maybe\n",
            ":2: configuration key 'discovery.enabled': must be true or false; got 'maybe'"
        ),
        ("serial: 9600\n", ":1: configuration key 'serial': must be a section of keys (key: value lines)"),
        (
            "\n\nserial:\n  max_line_bytes: 5\n",
            ":4: configuration key 'serial.max_line_bytes': must be between 64 and 1048576; got 5"
        ),
        (
            "replication:\n  postgres_url: postgresql://workoutd@db.example/gym\n  hub_id: hall\n  max_connections: 0\n",
            ":4: configuration key 'replication.max_connections': must be 1 to 8; got 0"
        ),
        (
            "replication:\n  postgres_url: postgresql://workoutd@db.example/gym\n  hub_id: hall\n  heartbeat_interval_s: 0\n",
            ":4: configuration key 'replication.heartbeat_interval_s': must be 1 to 3600 seconds; got 0"
        ),
    ]

    @Test(arguments: 0..<mistakes.count) func checkConfigNamesFileLineAndKey(index: Int) throws {
        let (yaml, message) = Self.mistakes[index]
        let file = try scratchFile(yaml)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try workoutd(["check-config", "--config", file])
        #expect(result.status == 78)
        #expect(result.output == "workoutd: \(file)\(message)\n")
    }

    @Test(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes"))
    func theDaemonRefusesToStartWithTheSameMessage() throws {
        let file = try scratchFile("serail:\n  baud: 9600\n")
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "never-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try workoutd(["--config", file, "--state-dir", state, "--control-socket", "none"])
        #expect(result.status == 78)
        #expect(
            result.output == "workoutd: \(file):1: configuration key 'serail': unknown key; did you mean 'serial'?\n"
        )
        #expect(!FileManager.default.fileExists(atPath: state), "nothing was started")
    }

    @Test func anUnknownEnvironmentVariableStopsTheStart() throws {
        let file = try scratchFile("log_level: info\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try workoutd(
            ["check-config", "--config", file],
            environment: ["WORKOUTD_SERIAL_BAUDRATE": "9600"]
        )
        #expect(result.status == 78)
        #expect(
            result.output
                == "workoutd: configuration key 'WORKOUTD_SERIAL_BAUDRATE': unknown environment variable; did you mean WORKOUTD_SERIAL_BAUD (serial.baud)?\n"
        )
        let known = try workoutd(["check-config", "--config", file], environment: ["WORKOUTD_SERIAL_BAUD": "9600"])
        #expect(known.status == 0)
    }

    @Test func theShippedConfigurationIsValid() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Config/workoutd.yaml").standardized.path
        let result = try workoutd(["check-config", "--config", shipped])
        #expect(result.status == 0)
        #expect(result.output == "workoutd: configuration \(shipped) is valid\n")
    }

    @Test func helpListsEveryDaemonFlagAndTheExitCodes() throws {
        let result = try workoutd(["--help"])
        #expect(result.status == 0)
        for flag in [
            "--config", "--device", "--state-dir", "--log-level", "--control-socket", "--in-memory", "check-config",
        ] {
            #expect(result.output.contains(flag), "workoutd --help names \(flag)")
        }
        #expect(result.output.contains("73 the state directory is in use"))
        #expect(result.output.contains("78 the configuration is"))
        #expect(result.output.contains("73 also when the control socket"))
    }
}

/// One daemon per state directory: the second exits at once with 73 and names the holder.
@Suite(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct StateDirectoryLockTests {
    @Test func aSecondDaemonOnTheSameStateDirectoryExits73() throws {
        let first = try ControlledDaemon()
        let state = first.directory.appendingPathComponent("state").path
        let second = try DaemonProcess(arguments: [
            "--config", first.configFile, "--state-dir", state, "--control-socket", "none",
        ])
        #expect(try second.waitForExit() == 73)
        #expect(
            second.log.contains("state directory \(state) is in use by pid \(first.daemon.process.processIdentifier)"),
            "\(second.log)"
        )
        #expect(first.daemon.process.isRunning, "the owner keeps running")
        #expect(try first.ctl(["status"]).status == 0)

        // Once the owner stops, the directory is free again.
        first.daemon.stop()
        let third = try DaemonProcess(
            arguments: ["--config", first.configFile, "--state-dir", state, "--control-socket", "none"],
            readiness: true
        )
        try third.waitUntilReady()
        #expect(third.process.isRunning)
    }
}
