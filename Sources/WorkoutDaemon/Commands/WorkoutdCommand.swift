import ArgumentParser
import ControlPlane
import ControlProtocol
import Foundation
import Logging
import SystemdSupport
import WorkoutProtocol
import WorkoutStorage

/// `workoutd`: serves wearables on serial devices; subcommands inspect what it stored.
public struct WorkoutdCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "workoutd",
        abstract: "Serve fitness wearables on serial devices: decode commands, run them, acknowledge each line.",
        discussion: """
            Without a subcommand, workoutd runs the daemon (`serve`); its flags:
            \(Serve.optionsHelp)
            Exit status: 0 stopped cleanly; 64 bad usage; 73 the state directory is in use by another \
            process, is not the daemon's own (owner, mode, a symlinked lock) or its database cannot be used; 78 the \
            configuration is invalid (the message names the file, line and key). 73 also when the control socket \
            cannot be created.
            """,
        version: WorkoutdVersion.current,
        subcommands: [
            Serve.self, CheckConfig.self, Workouts.self, Shares.self, CheckDatabase.self, Fleet.self,
            ConformanceCommand.self,
            ConfigurationKeysCommand.self,
        ],
        defaultSubcommand: Serve.self
    )

    public init() {}
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

    @Option(
        name: .customLong("state-dir"),
        help: "Where workouts are stored (default: \(StorageConfiguration.defaultStateDirectory))."
    )
    var stateDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    @Option(
        name: .customLong("control-socket"),
        help: "The control socket for workoutctl (default: \(ControlSocket.defaultPath)); 'none' disables it."
    )
    var controlSocket: String?

    @Flag(
        name: .customLong("in-memory"),
        help: "Keep workouts in memory only (nothing survives a restart): for benchmarks and trials."
    )
    var inMemory = false

    /// The OPTIONS part of this command's help, for `workoutd --help`.
    static var optionsHelp: String {
        let help = helpMessage(columns: 78)
        guard let start = help.range(of: "OPTIONS:") else { return help }
        return String(help[start.upperBound...])
    }

    func run() async throws {
        let allocatorLimits = AllocatorLimits.apply(environment: ProcessInfo.processInfo.environment)
        let configuration: DaemonConfiguration
        do throws(ConfigurationErrors) {
            configuration = try await DaemonConfiguration.load(
                file: config,
                environment: ProcessInfo.processInfo.environment,
                overrides: .init(
                    devices: devices,
                    stateDirectory: stateDirectory,
                    logLevel: logLevel,
                    controlSocket: controlSocket,
                    inMemory: inMemory
                )
            )
        } catch {
            // Run by ExecReload, these are the lines an operator finds with `journalctl -p err`: the `<3>`
            // prefix gives them the error priority, as the daemon's own log lines carry theirs.
            let priority = JournalStream.isConnected(fileDescriptor: STDERR_FILENO) ? "<3>" : ""
            FileHandle.standardError.write(Data(error.lines(priority: priority).utf8))
            throw ExitCode(ConfigurationError.exitStatus)
        }
        let forJournal = JournalStream.isConnected(fileDescriptor: STDERR_FILENO)
        DaemonLogLevel.process.level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            DaemonLogHandler(label: label, forJournal: forJournal)
        }
        let logger = Logger(label: "workoutd")
        logger.debug(
            "allocator limits",
            metadata: ["applied": "\(allocatorLimits.map(\.description).joined(separator: " "))"]
        )
        // One daemon per state directory: a second one would interleave writes to the same database and outbox.
        // (The in-memory store keeps nothing there, so trial and benchmark runs may share the default.)
        var stateLock: HeldStateDirectoryLock?
        if configuration.storage.backend == .sqlite {
            do {
                stateLock = HeldStateDirectoryLock(
                    stateDirectory: configuration.stateDirectory,
                    descriptor: try StateDirectoryLock.acquire(stateDirectory: configuration.stateDirectory)
                )
            } catch {
                logger.critical("\(error)")
                throw ExitCode(StateDirectoryLock.exitStatus)
            }
        }
        do {
            try await Daemon.run(configuration, stateLock: stateLock, logger: logger)
        } catch let error as StorageOpenError {
            // A damaged or foreign database is never overwritten: say which file and stop.
            logger.critical("\(error)")
            throw ExitCode(Self.storageExitStatus)
        } catch let error as ControlSocketError {
            logger.critical("\(error)")
            throw ExitCode(Self.storageExitStatus)
        }
    }
}

/// `workoutd check-config`: the start-up checks of the configuration without starting (like `sshd -t`).
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract:
            "Check the configuration file and WORKOUTD_* variables without starting; exit 0 when valid, 78 otherwise.",
        discussion: "systemctl reload runs this first, so a broken file is refused before the daemon is signalled."
    )

    @Option(name: .long, help: "YAML configuration file (default: \(DaemonConfiguration.defaultFile) if present).")
    var config: String?

    func run() async throws {
        // As the daemon reads it: the default file when it exists, else the defaults and the environment alone.
        let file =
            config
            ?? (FileManager.default.fileExists(atPath: DaemonConfiguration.defaultFile)
                ? DaemonConfiguration.defaultFile : nil)
        do throws(ConfigurationErrors) {
            _ = try await DaemonConfiguration.load(
                file: file,
                environment: ProcessInfo.processInfo.environment,
                overrides: .init()
            )
        } catch {
            // Run by ExecReload, these are the lines an operator finds with `journalctl -p err`: the `<3>`
            // prefix gives them the error priority, as the daemon's own log lines carry theirs.
            let priority = JournalStream.isConnected(fileDescriptor: STDERR_FILENO) ? "<3>" : ""
            FileHandle.standardError.write(Data(error.lines(priority: priority).utf8))
            throw ExitCode(ConfigurationError.exitStatus)
        }
        if let file {
            print("workoutd: configuration \(file) is valid")
        } else {
            print(
                "workoutd: no configuration file (\(DaemonConfiguration.defaultFile) does not exist); the defaults and WORKOUTD_* variables are valid"
            )
        }
    }
}
