import Foundation
import Testing
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// Start-up mistakes stop the daemon at once and say how to fix them, as the real binary shows them.
@Suite struct StartupMistakesTests {
    private func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "startup-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aControlSocketThatCannotBeCreatedStopsTheStartWith73() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A regular file where the socket's directory should be: refused for root as for anyone.
        let notADirectory = directory.appendingPathComponent("file").path
        try "".write(toFile: notADirectory, atomically: true, encoding: .utf8)
        let socket = notADirectory + "/control.sock"
        let daemon = try DaemonProcess(arguments: ["--in-memory", "--control-socket", socket])
        #expect(try daemon.waitForExit() == 73)
        #expect(daemon.log.contains("cannot create control socket \(socket): not a directory"), "\(daemon.log)")
        #expect(!daemon.log.contains("Domain"), "no Foundation error domains: \(daemon.log)")
        #expect(!daemon.log.contains("workoutd started"), "stopped before serving: \(daemon.log)")
    }

    @Test(.enabled(if: geteuid() == 0, "drops to uid 65534 to be refused"))
    func aControlSocketInADirectoryThisUserMayNotWriteIsPermissionDenied() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("control.sock").path
        let daemon = try DaemonProcess(
            arguments: ["--in-memory", "--control-socket", socket],
            launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        )
        #expect(try daemon.waitForExit() == 73)
        #expect(
            daemon.log.contains("cannot create control socket \(socket): permission denied; run as the daemon's user"),
            "\(daemon.log)"
        )
        #expect(!daemon.log.contains("Domain"), "\(daemon.log)")
    }

    @Test func aSecondDaemonOnATakenControlSocketStopsWith73() throws {
        let first = try ControlledDaemon()
        let state = first.directory.appendingPathComponent("second-state").path
        let second = try DaemonProcess(arguments: [
            "--config", first.configFile, "--state-dir", state, "--control-socket", first.socket,
        ])
        #expect(try second.waitForExit() == 73)
        #expect(
            second.log.contains("cannot create control socket \(first.socket): address in use by another workoutd"),
            "\(second.log)"
        )
        #expect(first.daemon.process.isRunning, "the first keeps running")
        #expect(try first.ctl(["status"]).status == 0, "and keeps its socket")
    }

    @Test func aTildeInAPathKeyIsTheHomeDirectoryNeverALiteralDirectory() throws {
        let home = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let config = home.appendingPathComponent("workoutd.yaml").path
        try "state_dir: ~/state\ncontrol_socket: ~/run/control.sock\n".write(
            toFile: config,
            atomically: true,
            encoding: .utf8
        )
        let literal = FileManager.default.currentDirectoryPath + "/~"
        let literalExisted = FileManager.default.fileExists(atPath: literal)
        let daemon = try DaemonProcess(arguments: ["--config", config], environment: ["HOME": home.path])
        defer { daemon.stop() }
        try daemon.waitForLog("control socket listening")
        #expect(FileManager.default.fileExists(atPath: home.path + "/state/workoutd.lock"))
        #expect(FileManager.default.fileExists(atPath: home.path + "/run/control.sock"))
        #expect(FileManager.default.fileExists(atPath: literal) == literalExisted, "no ./~ was made")
    }

    @Test func aTildeInAFileKeyIsReadFromTheHomeDirectory() throws {
        let home = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let token = home.appendingPathComponent("token").path
        #expect(
            FileManager.default.createFile(
                atPath: token,
                contents: Data("Zq0vVt3bN8yXw2LkR5mHc7JpA1sDf4Gh6Ue9Io0Tr2E\n".utf8),
                attributes: [.posixPermissions: 0o600]
            )
        )
        let config = home.appendingPathComponent("workoutd.yaml").path
        try "web:\n  token_file: ~/token\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            arguments: ["check-config", "--config", config],
            environment: ["HOME": home.path]
        )
        #expect(try daemon.waitForExit() == 0, "\(daemon.log)")
        #expect(daemon.log == "workoutd: configuration \(config) is valid\n")
    }

    @Test func aTildeNamingAnotherUserIsRefusedWithTheKey() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("workoutd.yaml").path
        try "state_dir: ~bob/state\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["check-config", "--config", config])
        #expect(try daemon.waitForExit() == 78)
        #expect(
            daemon.log
                == "workoutd: \(config):1: configuration key 'state_dir': only ~ and ~/ are expanded (to this user's home); write the full path instead of '~bob/state'\n"
        )
    }

    @Test func everyConfigurationErrorIsReportedInOneRun() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("workoutd.yaml").path
        try "serial:\n  baud: fast\nlimits:\n  commands_per_second: -5\nlisten: 0.0.0.0:8470\n".write(
            toFile: config,
            atomically: true,
            encoding: .utf8
        )
        let daemon = try DaemonProcess(
            arguments: ["check-config", "--config", config],
            unsetting: ["WORKOUTD_LIMITS_COMMANDS_PER_SECOND"]
        )
        #expect(try daemon.waitForExit() == 78)
        #expect(
            daemon.log == """
                workoutd: \(config):2: configuration key 'serial.baud': must be an integer; got 'fast'
                workoutd: \(config):4: configuration key 'limits.commands_per_second': must be 0 (off) to 1000000; got -5
                workoutd: \(config):5: configuration key 'listen': unknown key; did you mean one of 'web.listen', 'fleet.listen' (check its indentation)?

                """
        )
    }

    @Test(
        .enabled(
            if: !FileManager.default.fileExists(atPath: "/etc/workoutd/workoutd.yaml"),
            "the default file must be absent"
        )
    )
    func checkConfigWithoutAFileChecksTheDefaultsAndTheEnvironment() throws {
        let fine = try DaemonProcess(arguments: ["check-config"])
        #expect(try fine.waitForExit() == 0)
        #expect(
            fine.log
                == "workoutd: no configuration file (/etc/workoutd/workoutd.yaml does not exist); the defaults and WORKOUTD_* variables are valid\n"
        )
        let wrong = try DaemonProcess(arguments: ["check-config"], environment: ["WORKOUTD_SERIAL_BAUD": "fast"])
        #expect(try wrong.waitForExit() == 78)
        #expect(wrong.log == "workoutd: configuration key 'serial.baud': must be an integer; got 'fast'\n")
    }

    @Test(.enabled(if: geteuid() == 0, "drops to uid 65534, which may not open the test's pty"))
    func aWearableRefusedForPermissionIsOneWarningAndShownInDevices() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(chmod(directory.path, 0o777) == 0)
        let wearable = try SimulatedWearable()
        let socket = directory.appendingPathComponent("control.sock").path
        let config = directory.appendingPathComponent("workoutd.yaml").path
        try "discovery:\n  enabled: false\ncontrol_socket_group: \"\"\n".write(
            toFile: config,
            atomically: true,
            encoding: .utf8
        )
        let daemon = try DaemonProcess(
            arguments: [
                "--config", config, "--in-memory", "--control-socket", socket, "--device", wearable.devicePath,
            ],
            launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        )
        defer { daemon.stop() }
        try daemon.waitForLog("control socket listening")
        try daemon.waitForLog("device refuses to open")
        let user = getpwuid(65534).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "65534"
        let fix = "usermod -aG workoutd-wearable \(user)"
        let warnings = daemon.log.split(separator: "\n").filter { $0.contains("device refuses to open") }
        #expect(warnings.count == 1, "\(daemon.log)")
        #expect(warnings.first?.contains(" warning ") == true, "\(daemon.log)")
        #expect(warnings.first?.contains(fix) == true, "names the group and the command: \(daemon.log)")
        let devices = try Workoutctl.run(["--socket", socket, "devices"])
        #expect(devices.status == 0)
        #expect(
            devices.stdout.contains(
                "waiting: permission denied; the daemon's user needs group workoutd-wearable (\(fix)"
            ),
            "\(devices.stdout)"
        )
    }
}
