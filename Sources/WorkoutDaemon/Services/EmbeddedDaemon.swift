import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import WorkoutEngine

/// The daemon assembled in the calling process, for tests that need no process of their own.
///
/// It is the same assembly `workoutd` runs, with four differences that belong to owning a process: the configuration
/// is a ``ConfigurationDocument`` instead of a file, log lines go to `log` instead of stderr, no signal is trapped
/// (``shutdown()`` stops it, ``reload()`` re-reads the document) and ``waitUntilReady()`` says when devices can be
/// served, where `workoutd` sends systemd READY=1.
public final class EmbeddedDaemon: Sendable {
    /// What the daemon reads its configuration from; replace its text, then ``reload()``.
    public let document: ConfigurationDocument
    /// The state directory the configuration names.
    public let stateDirectory: String
    /// The control socket's path, nil when it is disabled.
    public let controlSocket: String?
    private let configuration: DaemonConfiguration
    private let level = DaemonLogLevel()
    private let log: @Sendable (String) -> Void
    private let parts = Mutex<(reloader: ConfigurationReloader?, group: ServiceGroup?)>((nil, nil))
    private let readiness = OneShot<Void>()

    /// Reads the configuration as `workoutd` would with these flags.
    ///
    /// Throws what `workoutd` would exit 78 for.
    ///
    /// `environment` stands for the process's `WORKOUTD_*` variables; the test process's own are not read.
    public init(
        document: ConfigurationDocument,
        environment: [String: String] = [:],
        devices: [String] = [],
        stateDirectory: String? = nil,
        logLevel: String? = nil,
        controlSocket: String? = nil,
        inMemory: Bool = false,
        log: @escaping @Sendable (String) -> Void
    ) async throws {
        self.document = document
        self.log = log
        configuration = try await DaemonConfiguration.load(
            file: "<in-memory workoutd.yaml>",
            document: document,
            environment: environment,
            overrides: .init(
                devices: devices,
                stateDirectory: stateDirectory,
                logLevel: logLevel,
                controlSocket: controlSocket,
                inMemory: inMemory
            )
        )
        self.stateDirectory = configuration.stateDirectory
        self.controlSocket = configuration.controlSocket
    }

    /// Runs the daemon until ``shutdown()`` or cancellation.
    ///
    /// Throws what `workoutd` would exit non-zero for.
    public func run() async throws {
        do {
            try await serve()
            readiness.finish(.failure(EmbeddedDaemonError("the daemon stopped")))
        } catch {
            readiness.finish(.failure(EmbeddedDaemonError("the daemon ended: \(error)")))
            throw error
        }
    }

    private func serve() async throws {
        level.level = configuration.logLevel
        let logger = Logger(label: "workoutd") { [level, log] label in
            DaemonLogHandler(label: label, forJournal: false, level: level, output: log)
        }
        var stateLock: HeldStateDirectoryLock?
        if configuration.storage.backend == .sqlite {
            stateLock = HeldStateDirectoryLock(
                stateDirectory: configuration.stateDirectory,
                descriptor: try StateDirectoryLock.acquire(stateDirectory: configuration.stateDirectory)
            )
        }
        let mode = Daemon.Mode(
            ownsProcess: false,
            logLevel: level,
            ready: { [readiness] in readiness.finish(.success(())) },
            assembled: { [self] reloader, group in
                parts.withLock { $0 = (reloader, group) }
            }
        )
        defer { stateLock?.release() }
        try await Daemon.run(configuration, stateLock: stateLock, logger: logger, mode: mode)
    }

    /// Returns once devices can be served; throws when the daemon ended before that.
    public func waitUntilReady() async throws {
        try await readiness.value()
    }

    /// One reload of ``document``, as SIGHUP does for `workoutd`; returns when it was applied or rejected.
    public func reload() async throws {
        guard let reloader = parts.withLock({ $0.reloader }) else {
            throw EmbeddedDaemonError("the daemon is not running")
        }
        await reloader.reload()
    }

    /// Starts the graceful shutdown SIGTERM starts for `workoutd`; ``run()`` returns when it is done.
    public func shutdown() async {
        guard let group = parts.withLock({ $0.group }) else { return }
        await group.triggerGracefulShutdown()
    }
}

/// Why an ``EmbeddedDaemon`` could not do what was asked.
public struct EmbeddedDaemonError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
