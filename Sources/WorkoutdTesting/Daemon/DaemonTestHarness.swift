import ControlProtocol
import Foundation
import NIOPosix
import ServiceSupport
import Synchronization
import WorkoutDaemon
import WorkoutEngine
import WorkoutProtocol

import class WorkoutctlCommands.ControlConnection

#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon under test runs: one test body can run in either.
public enum DaemonTestMode: String, CaseIterable, Sendable, CustomStringConvertible {
    /// The `WorkoutDaemon` assembly in the test process: configuration from memory, log lines captured.
    case inProcess
    /// The real `workoutd` process: configuration from a file, ready when systemd would hear READY=1.
    case live

    public var description: String { rawValue }
}

/// Runs a test body against a daemon, in process or live, with one client surface for both.
///
/// Either way the daemon gets a scratch directory with its state directory and control socket, is ready before the
/// body runs (devices served, control socket listening, reloads armed) and is stopped gracefully after it.
public enum DaemonTestHarness {
    /// Starts a daemon in `mode`, runs `body` with it and stops it.
    ///
    /// - Parameters:
    ///   - configuration: the YAML configuration (the file `workoutd --config` reads, or the in-memory document).
    ///   - devices: `--device` paths.
    ///   - logLevel: `--log-level`, which wins over the configuration; nil leaves the level to it.
    ///   - environment: `WORKOUTD_*` variables over ``DaemonProcess/defaultEnvironment``.
    ///   - directory: a directory an earlier daemon used: this one starts on what that one stored.
    public static func run<Value>(
        _ mode: DaemonTestMode,
        configuration: String = "log_level: info\n",
        devices: [String] = [],
        logLevel: String? = "info",
        environment: [String: String] = [:],
        directory: URL? = nil,
        _ body: (TestDaemon) async throws -> Value
    ) async throws -> Value {
        let daemon = try await TestDaemon(
            mode,
            configuration: configuration,
            devices: devices,
            logLevel: logLevel,
            environment: environment,
            directory: directory
        )
        // The body runs on a thread of its own: a body that blocks on a pty or socket read (most do) then cannot take
        // the cooperative pool's few threads from an in-process daemon.
        let thread = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { thread.shutdownGracefully { _ in } }
        do {
            let result = try await withTaskExecutorPreference(EventLoopTaskExecutor(thread.next())) {
                try await body(daemon)
            }
            try await daemon.stop()
            return result
        } catch {
            try? await daemon.stop()
            throw error
        }
    }
}

/// A daemon a test drives through what a user has.
///
/// Wearables on ptys, the control socket, `workoutctl`, reloads.
public final class TestDaemon: @unchecked Sendable {
    public let mode: DaemonTestMode
    /// The scratch directory: `state/`, `control.sock` and (live) `workoutd.yaml`.
    public let directory: URL
    public let socket: String
    public var stateDirectory: URL { directory.appendingPathComponent("state") }
    private let keepsDirectory: Bool
    private let running: Running

    private enum Running {
        case inProcess(EmbeddedDaemon, Task<Void, any Error>, CapturedLines, ended: EndedFlag)
        case live(DaemonProcess, configFile: String)
    }

    fileprivate init(
        _ mode: DaemonTestMode,
        configuration: String,
        devices: [String],
        logLevel: String?,
        environment: [String: String],
        directory reused: URL?
    ) async throws {
        self.mode = mode
        keepsDirectory = reused != nil
        directory =
            reused
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("daemon-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("control.sock").path
        let state = directory.appendingPathComponent("state").path
        switch mode {
        case .inProcess:
            let lines = CapturedLines()
            let embedded = try await EmbeddedDaemon(
                document: ConfigurationDocument(configuration),
                environment: DaemonProcess.defaultEnvironment.merging(environment) { $1 },
                devices: devices,
                stateDirectory: state,
                logLevel: logLevel,
                controlSocket: socket,
                log: { lines.append($0) }
            )
            let ended = EndedFlag()
            let task = Task {
                defer { ended.set() }
                try await embedded.run()
            }
            running = .inProcess(embedded, task, lines, ended: ended)
            // A daemon that neither becomes ready nor ends is cancelled, so its run (and readiness) ends.
            let watchdog = Task {
                try await Task.sleep(for: .seconds(30))
                task.cancel()
            }
            defer { watchdog.cancel() }
            do {
                try await embedded.waitUntilReady()
            } catch {
                _ = await task.result
                throw TestingError("the in-process daemon did not become ready: \(error)\n\(lines.text)")
            }
        case .live:
            let configFile = directory.appendingPathComponent("workoutd.yaml").path
            try configuration.write(toFile: configFile, atomically: true, encoding: .utf8)
            let process = try DaemonProcess(
                arguments: ["--config", configFile, "--control-socket", socket, "--state-dir", state]
                    + (logLevel.map { ["--log-level", $0] } ?? []) + devices.flatMap { ["--device", $0] },
                environment: environment,
                readiness: true
            )
            running = .live(process, configFile: configFile)
            try await offloaded { try process.waitUntilReady() }
        }
    }

    /// Everything the daemon logged so far, one line per event, as `workoutd` writes it to stderr.
    public var log: String {
        switch running {
        case .inProcess(_, _, let lines, _): lines.text
        case .live(let process, _): process.log
        }
    }

    /// The `workoutd` process of a live daemon; nil in process.
    public var process: DaemonProcess? {
        if case .live(let process, _) = running { return process }
        return nil
    }

    /// Waits until the log contains `text`: for tests of what is logged, not for waiting on the daemon.
    public func waitForLog(_ text: String, timeout: Duration = .seconds(30)) throws {
        switch running {
        case .inProcess(_, _, let lines, _):
            try lines.wait(for: text, timeout: timeout)
        case .live(let process, _):
            try process.waitForLog(text, timeout: timeout)
        }
    }

    /// Runs `workoutctl --socket <this daemon's socket> arguments…`.
    public func ctl(_ arguments: [String]) throws -> Workoutctl.Output {
        try Workoutctl.run(["--socket", socket] + arguments)
    }

    /// Runs `workoutctl … --json` and decodes each output line as `T`.
    public func ctlJSON<T: Decodable>(_ arguments: [String], as type: T.Type) throws -> [T] {
        let output = try ctl(arguments + ["--json"])
        guard output.status == 0 else {
            throw TestingError("workoutctl \(arguments) exited \(output.status): \(output.stderr)")
        }
        let decoder = ControlSocket.makeDecoder()
        return try output.lines.map { try decoder.decode(T.self, from: Data($0.utf8)) }
    }

    /// A raw connection to the control socket.
    public func connect() throws -> ControlConnection {
        try ControlConnection(path: socket)
    }

    /// One control call on a fresh connection; throws the daemon's error.
    public func call<Value: Codable & Sendable>(_ call: ControlCall, as type: Value.Type = Value.self) throws -> Value {
        let connection = try connect()
        defer { connection.close() }
        return try connection.call(call, as: type)
    }

    /// `status` through the control socket.
    public func status() throws -> StatusReport {
        try call(.status)
    }

    /// `devices` through the control socket.
    public func devices() throws -> [DeviceReport] {
        try call(.devices, as: DeviceList.self).devices
    }

    /// Waits until the device at `path` is connected, asking the control socket.
    ///
    /// With `connections`, until it was opened that many times.
    public func waitUntilConnected(_ path: String, connections: Int? = nil, timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try devices().contains(where: {
                $0.node == path && $0.connected && (connections == nil || $0.connections == connections)
            }) {
                return
            }
            usleep(20_000)
        }
        throw TestingError("\(path) was not connected within \(timeout):\n\(log)")
    }

    /// Replaces the configuration and reloads, as an operator edits the file and runs `systemctl reload`.
    ///
    /// Returns once the reload was applied or rejected: in process when the reload returns, live when systemd would
    /// hear READY=1 after RELOADING=1.
    public func reload(configuration: String) async throws {
        switch running {
        case .inProcess(let embedded, _, _, _):
            embedded.document.text = configuration
        case .live(_, let configFile):
            try configuration.write(toFile: configFile, atomically: true, encoding: .utf8)
        }
        try await reload()
    }

    /// Reloads the configuration as it stands.
    public func reload() async throws {
        switch running {
        case .inProcess(let embedded, _, _, _):
            try await embedded.reload()
        case .live(let process, _):
            try await offloaded { try process.reload() }
        }
    }

    /// Whether the daemon still runs.
    public var isRunning: Bool {
        switch running {
        case .inProcess(_, _, _, let ended): !ended.isSet
        case .live(let process, _): process.process.isRunning
        }
    }

    /// Stops the daemon gracefully and waits until it is gone; throws what an in-process run ended with.
    public func stop() async throws {
        switch running {
        case .inProcess(let embedded, let task, _, _):
            await embedded.shutdown()
            try await task.value
        case .live(let process, _):
            try await offloaded { process.stop() }
        }
    }

    deinit {
        if case .live(let process, _) = running { process.stop() }
        if !keepsDirectory { try? FileManager.default.removeItem(at: directory) }
    }
}

/// The log lines of an in-process daemon, as `workoutd` writes them to stderr.
final class CapturedLines: @unchecked Sendable {
    private let condition = NSCondition()
    private var captured = ""

    func append(_ line: String) {
        condition.withLock {
            captured += line
            condition.broadcast()
        }
    }

    var text: String { condition.withLock { captured } }

    /// Waits until the lines contain `text`.
    func wait(for text: String, timeout: Duration) throws {
        let deadline = Date().addingTimeInterval(timeout.inSeconds)
        try condition.withLock {
            while !captured.contains(text) {
                guard condition.wait(until: deadline) || captured.contains(text) else {
                    throw TestingError("the daemon did not log '\(text)' within \(timeout):\n\(captured)")
                }
            }
        }
    }
}

/// Whether an in-process daemon's run has returned.
final class EndedFlag: Sendable {
    private let value = Mutex(false)

    func set() { value.withLock { $0 = true } }

    var isSet: Bool { value.withLock { $0 } }
}

/// What a daemon told `NOTIFY_SOCKET`.
///
/// Read on a thread of its own as it arrives, so sd_notify never waits on a full socket.
public final class NotifyMessages: @unchecked Sendable {
    private let listener: NotifySocketListener
    private let condition = NSCondition()
    private var messages: [String] = []
    private var closed = false

    /// The socket's path: the daemon's `NOTIFY_SOCKET`.
    public var path: String { listener.path }

    public init() throws {
        listener = try NotifySocketListener()
        let thread = Thread { [listener, self] in
            while !self.isClosed {
                guard let message = listener.receive(timeout: .milliseconds(200)) else { continue }
                self.condition.withLock {
                    self.messages.append(message)
                    self.condition.broadcast()
                }
            }
        }
        thread.start()
    }

    private var isClosed: Bool { condition.withLock { closed } }

    /// How many datagrams arrived so far.
    public var count: Int { condition.withLock { messages.count } }

    /// Waits for a datagram with the line `field` among those from the `after`-th on.
    ///
    /// Throws when `process` exits first or none arrives within `timeout`.
    public func wait(
        for field: String,
        after: Int,
        process: DaemonProcess,
        timeout: Duration = .seconds(30)
    ) throws {
        let deadline = ContinuousClock.now + timeout
        try condition.withLock {
            while !messages.dropFirst(after).contains(where: { $0.split(separator: "\n").contains { $0 == field } }) {
                guard process.process.isRunning else {
                    throw TestingError(
                        "no \(field) before workoutd exited (\(process.process.terminationStatus)):\n\(process.log)"
                    )
                }
                guard ContinuousClock.now < deadline else {
                    throw TestingError("no \(field) within \(timeout):\n\(process.log)")
                }
                // Woken by each datagram; the short bound notices an exit, which sends none.
                _ = condition.wait(until: Date().addingTimeInterval(0.05))
            }
        }
    }

    /// Stops reading; the socket closes when the reader has let it go.
    public func close() {
        condition.withLock { closed = true }
    }
}
