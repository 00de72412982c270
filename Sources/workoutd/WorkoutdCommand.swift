import ArgumentParser
import Foundation
import Logging

/// `workoutd`: serves wearables on serial devices; subcommands inspect what it stored.
@main
struct WorkoutdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workoutd",
        abstract: "Serve fitness wearables on serial devices: decode commands, run them, acknowledge each line.",
        version: WorkoutdVersion.current,
        subcommands: [Serve.self],
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

    @Option(name: .long, help: "YAML configuration file (default: \(DaemonConfiguration.defaultFile) if present).")
    var config: String?

    @Option(name: .customLong("device"), help: "A serial device to serve (a tty, a pty, a socat link). Repeatable.")
    var devices: [String] = []

    @Option(name: .customLong("state-dir"), help: "Where workouts are stored (default: /var/lib/workoutd).")
    var stateDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    func run() async throws {
        let configuration: DaemonConfiguration
        do {
            configuration = try await DaemonConfiguration.load(
                file: config, environment: ProcessInfo.processInfo.environment,
                overrides: .init(devices: devices, stateDirectory: stateDirectory, logLevel: logLevel))
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("workoutd: \(error)\n".utf8))
            throw ExitCode(ConfigurationError.exitStatus)
        }
        let forJournal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, level: level, forJournal: forJournal)
        }
        try await Daemon.run(configuration, logger: Logger(label: "workoutd"))
    }
}
