import ControlProtocol
import Foundation
import WorkoutdTesting

import class WorkoutctlCommands.ControlConnection

/// A real `workoutd` with its control socket in a scratch directory, and `workoutctl` pointed at it.
///
/// For the tests that need the process itself (signals, exit codes, another daemon on the same state); the rest use
/// ``DaemonTestHarness``.
final class ControlledDaemon: @unchecked Sendable {
    let directory: URL
    let socket: String
    let configFile: String
    let daemon: DaemonProcess

    /// Starts the daemon serving `devices`, with `configuration` (YAML) as its `--config` file.
    ///
    /// `logLevel` is passed as `--log-level` (which wins over the file), nil leaves the level to the file. `directory`,
    /// when given, is one an earlier daemon used (its `state` kept): the new one starts on what that one stored.
    init(
        devices: [String] = [],
        configuration: String = "log_level: info\n",
        logLevel: String? = "info",
        arguments: [String] = [],
        directory reused: URL? = nil
    ) throws {
        directory =
            reused
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("ctl-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("control.sock").path
        configFile = directory.appendingPathComponent("workoutd.yaml").path
        try configuration.write(toFile: configFile, atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(
            arguments: [
                "--config", configFile, "--control-socket", socket,
                "--state-dir", directory.appendingPathComponent("state").path,
            ] + (logLevel.map { ["--log-level", $0] } ?? []) + devices.flatMap { ["--device", $0] } + arguments,
            readiness: true
        )
        try daemon.waitUntilReady()
    }

    /// Runs `workoutctl --socket <this daemon's socket> arguments…`.
    func ctl(_ arguments: [String]) throws -> Workoutctl.Output {
        try Workoutctl.run(["--socket", socket] + arguments)
    }

    /// Runs `workoutctl … --json` and decodes each output line as `T`.
    func ctlJSON<T: Decodable>(_ arguments: [String], as type: T.Type) throws -> [T] {
        let output = try ctl(arguments + ["--json"])
        guard output.status == 0 else {
            throw TestingError("workoutctl \(arguments) exited \(output.status): \(output.stderr)")
        }
        let decoder = ControlSocket.makeDecoder()
        return try output.lines.map { try decoder.decode(T.self, from: Data($0.utf8)) }
    }

    /// A raw connection, for what workoutctl does not do (malformed requests, clients that never read).
    func connect() throws -> ControlConnection {
        try ControlConnection(path: socket)
    }

    /// Waits until the device at `path` is connected (the daemon opened it).
    func waitUntilConnected(_ path: String, timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let devices = try ctlJSON(["devices"], as: DeviceReport.self)
            if devices.contains(where: { $0.node == path && $0.connected }) { return }
            usleep(20_000)
        }
        throw TestingError("\(path) was not connected within \(timeout):\n\(daemon.log)")
    }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
