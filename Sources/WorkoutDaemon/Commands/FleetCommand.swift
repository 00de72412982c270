import ArgumentParser
import Foundation
import Logging
import Replication
import ServiceLifecycle
import SystemdSupport
import UnixSignals
import WebServer

/// `workoutd fleet`: the fleet page, the same binary in a read-only role next to the central database.
///
/// It opens no device, no SQLite and no control socket; it reads `hubs` and `workouts` with a role that may only SELECT,
/// and serves them with the hub page's listener and login rules under `fleet.*`.
struct Fleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the fleet page: every hub's state and the workouts of all, read from the central PostgreSQL.",
        discussion: """
            Needs a role with SELECT on hubs, workouts, shares and workoutd_schema (docs/operations.md, Fleet page); \
            it never writes or migrates. The listener, TLS and login token are the fleet.* keys, as web.* for the hub \
            page; an address other than loopback needs a token. Exit status: 0 stopped; 64 bad usage; 69 the \
            central database cannot be read (its tables missing, a schema this version does not know, no \
            permission); 78 the configuration is invalid.
            """
    )

    /// EX_UNAVAILABLE from sysexits(3).
    static let databaseExitStatus: Int32 = 69

    @Option(
        name: .customLong("postgres-url"),
        help: "The central database, as replication.postgres_url names it (postgresql://role@host/db?sslmode=…)."
    )
    var postgresURL: String

    @Option(name: .long, help: "host:port or [v6]:port to listen on; overrides fleet.listen (default 127.0.0.1:8471).")
    var listen: String?

    @Option(name: .long, help: "YAML configuration file (default: \(DaemonConfiguration.defaultFile) if present).")
    var config: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    func run() async throws {
        let file =
            config
            ?? (FileManager.default.fileExists(atPath: DaemonConfiguration.defaultFile)
                ? DaemonConfiguration.defaultFile : nil)
        let settings: DaemonConfiguration
        do throws(ConfigurationErrors) {
            settings = try await DaemonConfiguration.load(
                file: file,
                environment: ProcessInfo.processInfo.environment,
                overrides: .init(logLevel: logLevel)
            )
        } catch {
            FileHandle.standardError.write(Data(error.lines(priority: "").utf8))
            throw ExitCode(ConfigurationError.exitStatus)
        }
        var web = settings.fleet.web
        if let listen {
            do {
                web.listen = try ListenAddress(parsing: listen)
            } catch {
                Self.fail("--listen: \(error.description); got '\(listen)'")
                throw ExitCode(ConfigurationError.exitStatus)
            }
        }
        if web.listen == nil {
            Self.fail("fleet.listen is off: the fleet page has nothing to do; give --listen HOST:PORT")
            throw ExitCode(ConfigurationError.exitStatus)
        }
        if web.requiresLogin, web.token == nil, let address = web.listen {
            Self.fail(
                "\(address) is reachable from the network, so logins need a token: set fleet.token_credential (LoadCredential=) or fleet.token_file"
            )
            throw ExitCode(ConfigurationError.exitStatus)
        }
        var database: ReplicationConfiguration
        do {
            database = try ReplicationConfiguration(
                url: postgresURL,
                passwordFile: settings.fleet.passwordFile,
                hubID: "fleet"
            )
            if let credential = settings.fleet.passwordCredential { database.passwordSource = .credential(credential) }
            _ = try database.readPassword()
        } catch {
            let key = error.key.map { $0.replacingOccurrences(of: "replication.", with: "fleet.") } ?? "--postgres-url"
            Self.fail("\(key): \(error.description)")
            throw ExitCode(ConfigurationError.exitStatus)
        }

        let forJournal = JournalStream.isConnected(fileDescriptor: STDERR_FILENO)
        DaemonLogLevel.process.level = settings.logLevel
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, forJournal: forJournal) }
        let logger = Logger(label: "workoutd")
        for warning in database.startWarnings {
            logger.warning("\(warning.replacingOccurrences(of: "replication.", with: "fleet."))")
        }
        let reader = FleetDatabase(configuration: database, logger: logger)
        do {
            try await reader.check()
        } catch {
            logger.critical("fleet page not started: \(error.message)")
            throw ExitCode(Self.databaseExitStatus)
        }
        logger.info("fleet page reading the central database", metadata: ["server": "\(reader.server)"])
        let server = FleetServer(configuration: web, database: reader, logger: logger)
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: server)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(5)
        groupConfiguration.maximumCancellationDuration = .seconds(2)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            logger.critical("fleet page stopped: \(error)")
            throw ExitCode(Self.databaseExitStatus)
        }
    }

    private static func fail(_ message: String) {
        FileHandle.standardError.write(Data("workoutd fleet: \(message)\n".utf8))
    }
}
