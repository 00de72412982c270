import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A `workoutd` process started for a test, with its stderr captured to a file.
///
/// The binary is `$WORKOUTD_BINARY` when set, otherwise the `workoutd` built beside the test bundle.
public final class DaemonProcess: @unchecked Sendable {
    public let process: Process
    public let logPath: String
    public let arguments: [String]
    /// What the daemon sends to `NOTIFY_SOCKET`, when started with `readiness`.
    public let notifications: NotifyMessages?

    /// What every daemon a test starts gets unless the test's `environment` says otherwise.
    ///
    /// Tests and the soak drive thousands of commands a second on purpose, so the per-device rate limit is off; the
    /// tests of the limit itself set it. The web server (on 127.0.0.1:8470 by default) is off, so daemons running side
    /// by side do not contend for one port; the web tests turn it on.
    public static let defaultEnvironment = ["WORKOUTD_LIMITS_COMMANDS_PER_SECOND": "0", "WORKOUTD_WEB_LISTEN": "off"]

    /// Starts `workoutd` with `arguments` (and extra environment) and returns once it is running. `unsetting`
    /// names defaults to leave out, so the configuration file decides (e.g. `WORKOUTD_WEB_LISTEN`). A `launcher`
    /// runs the daemon (`["/usr/sbin/ip", "netns", "exec", name]`: in a network namespace), and must exec it,
    /// so the process is the daemon's. With `readiness` the test listens on the daemon's `NOTIFY_SOCKET`, as
    /// systemd does, for ``waitUntilReady(timeout:)``.
    public init(
        arguments: [String],
        environment: [String: String] = [:],
        unsetting: Set<String> = [],
        launcher: [String] = [],
        readiness: Bool = false
    ) throws {
        notifications = readiness ? try NotifyMessages() : nil
        let binary = try Self.binaryPath()
        logPath =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("workoutd-test-\(UUID().uuidString).log").path
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw TestingError("cannot create \(logPath)") }
        self.arguments = arguments
        process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? binary)
        process.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [binary] + arguments
        var env = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("WORKOUTD_") && $0.key != "NOTIFY_SOCKET" && $0.key != "JOURNAL_STREAM"
        }
        env.merge(Self.defaultEnvironment.filter { !unsetting.contains($0.key) }) { $1 }
        env.merge(environment) { $1 }
        if let notifications { env["NOTIFY_SOCKET"] = notifications.path }
        process.environment = env
        process.standardError = log
        process.standardOutput = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The executable under test.
    public static func binaryPath() throws -> String {
        try BuiltExecutable.path(named: "workoutd", overriddenBy: "WORKOUTD_BINARY")
    }

    /// Everything the daemon logged so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Waits until the log contains `text`; throws with the log when it does not appear in time.
    public func waitForLog(_ text: String, timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if log.contains(text) { return }
            guard process.isRunning else {
                throw TestingError("workoutd exited (\(process.terminationStatus)) before logging '\(text)':\n\(log)")
            }
            usleep(10_000)
        }
        throw TestingError("workoutd did not log '\(text)' within \(timeout):\n\(log)")
    }

    /// Waits until the daemon is ready, as systemd learns it: READY=1.
    ///
    /// Devices are served, the control socket listens and SIGHUP is armed. Needs `readiness` at start.
    public func waitUntilReady(timeout: Duration = .seconds(30)) throws {
        guard let notifications else { throw TestingError("started without readiness: no NOTIFY_SOCKET to hear") }
        try notifications.wait(for: "READY=1", after: 0, process: self, timeout: timeout)
    }

    /// Sends SIGHUP and waits until the reload is over, applied or rejected.
    ///
    /// That is systemd's RELOADING=1, then READY=1. Needs `readiness` at start.
    public func reload(timeout: Duration = .seconds(30)) throws {
        guard let notifications else { throw TestingError("started without readiness: no NOTIFY_SOCKET to hear") }
        let before = notifications.count
        signal(SIGHUP)
        try notifications.wait(for: "RELOADING=1", after: before, process: self, timeout: timeout)
        try notifications.wait(for: "READY=1", after: before, process: self, timeout: timeout)
    }

    /// Sends a signal (SIGTERM for a graceful stop, SIGKILL for a crash).
    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to exit and returns its status; throws if it outlives `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(30)) throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw TestingError("workoutd still running after \(timeout)") }
            usleep(10_000)
        }
        return process.terminationStatus
    }

    /// Stops the daemon gracefully (SIGTERM), killing it if it does not exit in time.
    public func stop() {
        guard process.isRunning else { return }
        signal(SIGTERM)
        if !waitUntilGone(timeout: .seconds(10)) {
            signal(SIGKILL)
            _ = waitUntilGone(timeout: .seconds(5))
        }
    }

    /// Whether the process ended within `timeout`, reaped or not. Why not only `isRunning`: seen with many
    /// daemons in one test process, a daemon that had exited stayed a zombie for minutes while Foundation's
    /// `isRunning` said true, and every stop then waited out both timeouts.
    private func waitUntilGone(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && !isZombie {
            guard ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// A zombie whose threads are all gone. The leader turns `Z` as soon as its own thread exits, while the
    /// others may still be tearing down and holding the process's files (its state-directory lock among them).
    private var isZombie: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        // Fields from the state on: state (3rd field of the line) … num_threads (20th).
        let fields = stat[afterName.upperBound...].split(separator: " ")
        return fields.count > 17 && fields[0] == "Z" && fields[17] == "1"
    }

    deinit {
        stop()
        notifications?.close()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// The seed commands from `../shared/reference`, when the checkout has them beside it.
public enum SeedCommands {
    public static func lines(filePath: String = #filePath) -> [String]? {
        var directory = URL(fileURLWithPath: filePath)
        for _ in 0..<6 {
            directory.deleteLastPathComponent()
            let candidate = directory.appendingPathComponent("../shared/reference/seed-commands.jsonl").standardized
            if let text = try? String(contentsOf: candidate, encoding: .utf8) {
                return text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            }
        }
        return nil
    }
}
