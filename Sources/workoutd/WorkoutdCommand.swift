import ArgumentParser
import Foundation
import Logging
import WorkoutStorage
import SystemdSupport

/// `workoutd`: serves wearables on serial devices; subcommands inspect what it stored.
@main
struct WorkoutdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workoutd",
        abstract: "Serve fitness wearables on serial devices: decode commands, run them, acknowledge each line.",
        version: WorkoutdVersion.current,
        subcommands: [Serve.self, Workouts.self, Shares.self],
        defaultSubcommand: Serve.self
    )
}

/// The version reported by `--version` and the control socket.
enum WorkoutdVersion {
    static let current = "0.1.0"
}

/// Runs the daemon (the default subcommand).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the daemon in the foreground.")

    /// EX_CANTCREAT from sysexits(3): the database cannot be used, and restarting will not help.
    static let storageExitStatus: Int32 = 73

    @Option(name: .long, help: "YAML configuration file (default: \(DaemonConfiguration.defaultFile) if present).")
    var config: String?

    @Option(name: .customLong("device"), help: "A serial device to serve (a tty, a pty, a socat link). Repeatable.")
    var devices: [String] = []

    @Option(name: .customLong("state-dir"), help: "Where workouts are stored (default: /var/lib/workoutd).")
    var stateDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    @Option(name: .customLong("control-socket"), help: "The control socket for workoutctl (default: /run/workoutd/control.sock); 'none' disables it.")
    var controlSocket: String?

    @Flag(name: .customLong("in-memory"), help: "Keep workouts in memory only (nothing survives a restart): for benchmarks and trials.")
    var inMemory = false

    func run() async throws {
        let configuration: DaemonConfiguration
        do {
            configuration = try await DaemonConfiguration.load(
                file: config, environment: ProcessInfo.processInfo.environment,
                overrides: .init(devices: devices, stateDirectory: stateDirectory, logLevel: logLevel, controlSocket: controlSocket, inMemory: inMemory))
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("workoutd: \(error)\n".utf8))
            throw ExitCode(ConfigurationError.exitStatus)
        }
        let forJournal = JournalStream.isConnected(fileDescriptor: STDERR_FILENO)
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, level: level, forJournal: forJournal)
        }
        let logger = Logger(label: "workoutd")
        do {
            try await Daemon.run(configuration, logger: logger)
        } catch let error as StorageOpenError {
            // A damaged or foreign database is never overwritten: say which file and stop.
            logger.critical("\(error)")
            throw ExitCode(Self.storageExitStatus)
        }
    }
}
