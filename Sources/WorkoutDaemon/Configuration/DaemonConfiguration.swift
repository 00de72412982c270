import Configuration
import ControlPlane
import ControlProtocol
import DeviceDiscovery
import Foundation
import Logging
import Replication
import SerialTransport
import ShareDelivery
import SystemPackage
import WebServer
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage

/// Everything the daemon reads at start.
///
/// The YAML file, then `WORKOUTD_*` environment variables, then flags.
///
/// Keys are documented in `Config/workoutd.yaml`. Values are read as strings and validated here so that a
/// bad value names its key instead of silently falling back to a default.
struct DaemonConfiguration: Sendable {
    static let defaultFile = "/etc/workoutd/workoutd.yaml"
    static let environmentPrefix = "WORKOUTD_"

    var devices: [String] = []
    /// `devices.allowed_serials`: when set, only udev-found devices whose identity is listed are served.
    ///
    /// The identity is `ID_SERIAL`, as `workoutctl devices` shows it; nil serves every matching device.
    var allowedSerials: Set<String>?
    /// `serial.*`, `reconnect.*`, `shutdown.drain_timeout_ms`, over the transport's own defaults.
    var serial = SerialTransportConfiguration()
    /// `state_dir` and `storage.backend`.
    var storage = StorageConfiguration()
    var stateDirectory: String {
        get { storage.stateDirectory }
        set { storage.stateDirectory = newValue }
    }
    var logLevel: Logger.Level = .info
    /// `clock.assume_synchronized`: the wall clock is trusted without asking.
    ///
    /// For a hub with a battery-backed clock and no NTP, or one whose NTP daemon the unit cannot ask; no time is then
    /// marked `unsynchronized`.
    var clockAssumedSynchronized = false
    /// Which udev ttys to serve (`discovery.match`); `nil` when `discovery.enabled` is false.
    var discovery: DeviceMatcher? = .standard
    /// The control socket's path; `nil` when disabled (`control_socket: ""` or `--control-socket none`).
    var controlSocket: String? = ControlSocket.defaultPath
    /// `control_socket_group`: whose members may read through the control socket.
    ///
    /// Nil (`""`) for nobody but root and the daemon's user.
    var controlSocketGroup: String? = ControlAuthorization.defaultReaderGroup
    /// `shares.<service>.*`: how each service's shares are delivered, and the delivery worker's pacing.
    var shares = ShareDeliveryConfiguration()
    /// `replication.*`: the central PostgreSQL; nil when `replication.postgres_url` is empty (the default).
    var replication: ReplicationConfiguration?
    /// `limits.*`: what one device may cost the hub (rate, pending shares, idle session memory).
    var limits = DeviceLimits()
    /// `web.*`: the web page and HTTP API.
    var web = WebConfiguration()
    /// `fleet.*`: the fleet page of `workoutd fleet` (the serving daemon does not read them).
    var fleet = FleetSettings()
    /// Where this configuration was read from, so SIGHUP can read the same places again.
    var origin = Origin()

    struct Origin: Sendable {
        var file: String?
        /// The YAML document held in memory instead of a file (a daemon assembled in a test process).
        var document: ConfigurationDocument?
        var environment: [String: String] = [:]
        var overrides = Overrides()
    }

    /// Command-line values, which win over the file and the environment.
    struct Overrides: Sendable {
        var devices: [String] = []
        var stateDirectory: String?
        var logLevel: String?
        var controlSocket: String?
        var inMemory = false
    }

    /// The configuration as it reads now from the same file, environment and flags (for a reload).
    func reloaded() async throws -> DaemonConfiguration {
        try await Self.load(
            file: origin.file,
            document: origin.document,
            environment: origin.environment,
            overrides: origin.overrides
        )
    }

    /// The configuration, or every error found in it (``ConfigurationErrors``), not only the first.
    static func load(
        file: String?,
        document: ConfigurationDocument? = nil,
        environment: [String: String],
        overrides: Overrides
    ) async throws(ConfigurationErrors) -> DaemonConfiguration {
        var problems = ConfigurationCheck.checkEnvironment(environment)
        let check: ConfigurationCheck?
        let reader: ConfigurationReader
        do {
            check = try self.check(file: file, document: document)
            reader = try await makeReader(file: file, document: document, environment: environment)
        } catch let error as ConfigurationError {
            throw ConfigurationErrors(errors: problems + [error])
        } catch {
            throw ConfigurationErrors(errors: problems + [ConfigurationError(key: "--config", problem: "\(error)")])
        }
        problems += check?.problems ?? []
        var config: DaemonConfiguration?
        do {
            config = try read(reader, file: file, document: document, environment: environment, overrides: overrides)
        } catch let error as ConfigurationError {
            reader.problems.append(error)
        } catch {
            reader.problems.append(ConfigurationError(key: "--config", problem: "\(error)"))
        }
        // A value the file check already refused (`baud: fast`) is reported once, with its line; so is a key whose
        // default, read in place of its refused value, then failed a check of its own.
        for error in reader.problems where !problems.contains(where: { $0.key == error.key }) {
            problems.append(check?.locate(error) ?? error)
        }
        guard problems.isEmpty, let config else {
            let ordered = problems.enumerated().sorted {
                ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset)
            }
            throw ConfigurationErrors(errors: ordered.map(\.element))
        }
        return config
    }

    /// Checks the file's keys and types against `ConfigurationKeys`.
    ///
    /// What is wrong is in the result's `problems`.
    ///
    /// Nil when there is no file (the default one may be absent); throws when it cannot be read or is not YAML.
    static func check(file: String?, document: ConfigurationDocument? = nil) throws -> ConfigurationCheck? {
        let path = file ?? defaultFile
        if let document { return try ConfigurationCheck(yaml: document.text, file: path) }
        guard file != nil || FileManager.default.fileExists(atPath: path) else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(key: "--config", problem: "cannot read \(path): \(Self.reason(error))")
        }
        return try ConfigurationCheck(yaml: text, file: path)
    }

    /// A file error in plain words (`no such file or directory`), without Foundation's error domains.
    private static func reason(_ error: any Error) -> String {
        func words(_ code: Int32) -> String {
            let text = String(cString: strerror(code))
            return text.prefix(1).lowercased() + text.dropFirst()
        }
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return words(Int32(underlying.code))
        }
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileReadNoSuchFile, .fileNoSuchFile: return words(ENOENT)
        case .fileReadNoPermission: return words(EACCES)
        default: return error.localizedDescription
        }
    }

    private static func read(
        _ reader: ConfigurationReader,
        file: String?,
        document: ConfigurationDocument?,
        environment: [String: String],
        overrides: Overrides
    ) throws -> DaemonConfiguration {
        var config = DaemonConfiguration()
        // `devices:` is a list of paths, or a section with `paths:` and `allowed_serials:` (both forms may meet:
        // a list in the file and WORKOUTD_DEVICES_PATHS; the paths of both are served).
        config.devices = (try reader.paths("devices") ?? []) + (try reader.paths("devices.paths") ?? [])
        if let allowed = try reader.strings("devices.allowed_serials") {
            if let blank = allowed.first(where: {
                $0.trimmingCharacters(in: .whitespaces).isEmpty || $0.contains(where: \.isNewline)
            }) {
                throw ConfigurationError(
                    key: "devices.allowed_serials",
                    problem: "entries must be identities as workoutctl devices shows them; got '\(blank)'"
                )
            }
            config.allowedSerials = Set(allowed)
        }
        config.serial.baud = try reader.integer("serial.baud", default: config.serial.baud) {
            SerialPort.isSupported(baud: $0) ? nil : "is not a supported baud rate"
        }
        config.serial.pipeline.maximumLineLength = try reader.integer(
            "serial.max_line_bytes",
            default: config.serial.pipeline.maximumLineLength
        ) { (64...1 << 20).contains($0) ? nil : "must be between 64 and 1048576" }
        config.serial.pipeline.maximumPendingLines = try reader.integer(
            "serial.max_pending_lines",
            default: config.serial.pipeline.maximumPendingLines
        ) { (1...65536).contains($0) ? nil : "must be between 1 and 65536" }
        if let ending = try reader.string("serial.reply_line_ending") {
            guard let value = ReplyLineEnding(rawValue: ending) else {
                throw ConfigurationError(key: "serial.reply_line_ending", problem: "must be auto, lf or crlf")
            }
            config.serial.pipeline.replyLineEnding = value
        }
        config.stateDirectory = try reader.path("state_dir") ?? config.stateDirectory
        config.logLevel = try parseLogLevel(try reader.string("log_level"), key: "log_level") ?? config.logLevel
        func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
        let initialDelay = try reader.integer(
            "reconnect.initial_delay_ms",
            default: milliseconds(config.serial.reconnect.initialDelay)
        ) { $0 > 0 ? nil : "must be positive" }
        let maximumDelay = try reader.integer(
            "reconnect.max_delay_ms",
            default: milliseconds(config.serial.reconnect.maximumDelay)
        ) { $0 >= initialDelay ? nil : "must be at least reconnect.initial_delay_ms" }
        config.serial.reconnect.initialDelay = .milliseconds(initialDelay)
        config.serial.reconnect.maximumDelay = .milliseconds(maximumDelay)
        config.serial.drainTimeout = .milliseconds(
            try reader.integer("shutdown.drain_timeout_ms", default: milliseconds(config.serial.drainTimeout)) {
                $0 >= 0 ? nil : "must not be negative"
            }
        )
        config.clockAssumedSynchronized = try reader.bool("clock.assume_synchronized", default: false)
        if try reader.bool("discovery.enabled", default: true) {
            let rules = try reader.strings("discovery.match") ?? DeviceMatcher.defaultRules
            do {
                config.discovery = try DeviceMatcher(parsing: rules)
            } catch {
                throw ConfigurationError(key: "discovery.match", problem: "rule \"\(error.rule)\": \(error.reason)")
            }
        } else {
            config.discovery = nil
        }

        if let backend = try reader.string("storage.backend") {
            guard let parsed = StorageConfiguration.Backend(rawValue: backend) else {
                throw ConfigurationError(
                    key: "storage.backend",
                    problem:
                        "must be one of \(StorageConfiguration.Backend.allCases.map(\.rawValue).joined(separator: ", ")); got '\(backend)'"
                )
            }
            config.storage.backend = parsed
        }
        if overrides.inMemory { config.storage.backend = .memory }
        config.storage.maximumDatabaseBytes = try reader.integer(
            "storage.max_database_bytes",
            default: config.storage.maximumDatabaseBytes
        ) { $0 >= 0 ? nil : "must not be negative (0: no budget)" }
        config.limits = try readLimits(reader)
        config.shares.sinks = try readShareSinks(reader)
        config.replication = try readReplication(reader, storage: config.storage.backend, file: file ?? defaultFile)
        config.web = try readWeb(reader)
        config.fleet = try readFleet(reader)

        let controlSocketKey = overrides.controlSocket == nil ? "control_socket" : "--control-socket"
        config.controlSocket = try parseControlSocket(
            HomeDirectory.expandIfSet(
                overrides.controlSocket ?? reader.string("control_socket"),
                key: controlSocketKey
            ),
            key: controlSocketKey
        )
        if let group = try reader.string("control_socket_group") {
            config.controlSocketGroup = group.isEmpty ? nil : group
        }
        config.origin = Origin(
            file: file,
            document: document,
            environment: environment.filter { $0.key.hasPrefix(environmentPrefix) },
            overrides: overrides
        )

        config.devices += try overrides.devices.map { try HomeDirectory.expand($0, key: "--device") }
        if let stateDirectory = overrides.stateDirectory {
            config.stateDirectory = try HomeDirectory.expand(stateDirectory, key: "--state-dir")
        }
        if let level = try parseLogLevel(overrides.logLevel, key: "--log-level") { config.logLevel = level }
        return config
    }

    private static func readLimits(_ reader: ConfigurationReader) throws -> DeviceLimits {
        var limits = DeviceLimits()
        let most = 1_000_000
        limits.commandsPerSecond = try reader.integer("limits.commands_per_second", default: limits.commandsPerSecond) {
            (0...most).contains($0) ? nil : "must be 0 (off) to \(most)"
        }
        limits.commandBurst = try reader.integer("limits.command_burst", default: limits.commandBurst) {
            (1...most).contains($0) ? nil : "must be 1 to \(most)"
        }
        limits.pendingSharesPerDevice = try reader.integer(
            "limits.pending_shares_per_device",
            default: limits.pendingSharesPerDevice
        ) { (0...most).contains($0) ? nil : "must be 0 (no limit) to \(most)" }
        let idle = try reader.integer(
            "limits.session_idle_timeout_s",
            default: Int(limits.sessionIdleTimeout / .seconds(1))
        ) { (0...366 * 86_400).contains($0) ? nil : "must be 0 (keep) to 31622400" }
        limits.sessionIdleTimeout = .seconds(idle)
        return limits
    }

    private static func readShareSinks(_ reader: ConfigurationReader) throws -> ShareSinkConfiguration {
        var sinks: [ShareService: ShareSinkConfiguration.Sink] = [:]
        for service in ShareService.allCases {
            let prefix = "shares.\(service.rawValue)"
            let kind = try reader.string("\(prefix).sink")
            let url = try reader.string("\(prefix).url")
            // The program (the first item) is a path like any other; its arguments are left as written.
            let command = try reader.strings("\(prefix).command").map { items in
                try items.enumerated().map { index, item in
                    index == 0 ? try HomeDirectory.expand(item, key: "\(prefix).command") : item
                }
            }
            let timeout: Int? =
                try reader.string("\(prefix).timeout_ms") == nil
                ? nil : try reader.integer("\(prefix).timeout_ms", default: 0) { $0 > 0 ? nil : "must be positive" }
            guard kind != nil || url != nil || command != nil || timeout != nil else { continue }
            do {
                sinks[service] = try ShareSinkConfiguration.Sink(
                    keyPrefix: prefix,
                    sink: kind,
                    url: url,
                    command: command,
                    timeoutMilliseconds: timeout
                )
            } catch {
                throw ConfigurationError(key: error.key, problem: error.message)
            }
        }
        return ShareSinkConfiguration(sinks: sinks)
    }

    private static func readReplication(
        _ reader: ConfigurationReader,
        storage: StorageConfiguration.Backend,
        file: String
    ) throws -> ReplicationConfiguration? {
        guard let url = try reader.string("replication.postgres_url"), !url.isEmpty else { return nil }
        guard storage == .sqlite else {
            // The outbox lives in the SQLite database; a memory store has nothing that survives to ship.
            throw ConfigurationError(
                key: "replication.postgres_url",
                problem: "needs storage.backend: sqlite (the backlog waits in SQLite)"
            )
        }
        guard
            let hubID = try reader.string("replication.hub_id").flatMap({ $0.isEmpty ? nil : $0 })
                ?? ReplicationConfiguration.machineID()
        else {
            throw ConfigurationError(
                key: "replication.hub_id",
                problem: "must be set: /etc/machine-id is missing or empty"
            )
        }
        let passwordFile = try reader.path("replication.password_file")
        var replication: ReplicationConfiguration
        do {
            replication = try ReplicationConfiguration(url: url, passwordFile: passwordFile, hubID: hubID)
        } catch {
            throw ConfigurationError(key: "replication.postgres_url", problem: error.description)
        }
        try readReplicationSecrets(reader, into: &replication, file: file)
        let days = try reader.integer("replication.retention_days", default: 0) {
            $0 >= 0 ? nil : "must not be negative"
        }
        replication.retention = days == 0 ? nil : .seconds(days * 86_400)
        let range = ReplicationConfiguration.maximumConnectionsRange
        replication.maximumConnections = try reader.integer(
            "replication.max_connections",
            default: replication.maximumConnections
        ) {
            range.contains($0) ? nil : "must be \(range.lowerBound) to \(range.upperBound)"
        }
        let heartbeatRange = ReplicationConfiguration.heartbeatIntervalRange
        let heartbeat = try reader.integer(
            "replication.heartbeat_interval_s",
            default: Int(replication.heartbeatInterval.components.seconds)
        ) {
            heartbeatRange.contains($0)
                ? nil : "must be \(heartbeatRange.lowerBound) to \(heartbeatRange.upperBound) seconds"
        }
        replication.heartbeatInterval = .seconds(heartbeat)
        if let name = try reader.string("replication.hub_name"), !name.isEmpty { replication.hubName = name }
        do {
            _ = try replication.readPassword()
        } catch {
            throw ConfigurationError(key: error.key ?? "replication.password_file", problem: error.description)
        }
        return replication
    }

    /// How the replication password is found, and whether it may go to an unverified server.
    ///
    /// That is `replication.password_credential` (a systemd credential's name),
    /// `replication.allow_password_without_verified_server`, and whether a password in the URL sits in a file others
    /// can read.
    private static func readReplicationSecrets(
        _ reader: ConfigurationReader,
        into replication: inout ReplicationConfiguration,
        file: String
    ) throws {
        if let credential = try reader.string("replication.password_credential"), !credential.isEmpty {
            guard !credential.contains("/"), credential != ".", credential != ".." else {
                throw ConfigurationError(
                    key: "replication.password_credential",
                    problem: "must be a credential name (LoadCredential=<name>:<file>), not a path; got '\(credential)'"
                )
            }
            if case .file = replication.passwordSource {
                throw ConfigurationError(
                    key: "replication.password_credential",
                    problem: "and replication.password_file are both set; keep one"
                )
            }
            replication.passwordSource = .credential(credential)
        }
        replication.allowPasswordWithoutVerifiedServer = try reader.bool(
            "replication.allow_password_without_verified_server",
            default: false
        )
        var info = stat()
        if replication.urlPassword != nil, stat(file, &info) == 0, info.st_mode & 0o004 != 0 {
            replication.urlPasswordExposedIn = file
        }
    }

    private static func makeReader(
        file: String?,
        document: ConfigurationDocument?,
        environment: [String: String]
    ) async throws -> ConfigurationReader {
        let variables = Dictionary(
            uniqueKeysWithValues: environment.compactMap { key, value in
                key.hasPrefix(environmentPrefix) ? (String(key.dropFirst(environmentPrefix.count)), value) : nil
            }
        )
        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: variables)]
        let path = file ?? defaultFile
        if let document {
            do {
                providers.append(try YAMLDocumentProvider(text: document.text, name: path))
            } catch {
                throw ConfigurationError(key: "--config", problem: "cannot use \(path): \(error)")
            }
            return ConfigurationReader(reader: ConfigReader(providers: providers))
        }
        do {
            providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(path), allowMissing: file == nil))
        } catch {
            throw ConfigurationError(key: "--config", problem: "cannot use \(path): \(error)")
        }
        return ConfigurationReader(reader: ConfigReader(providers: providers))
    }

    /// An absolute path, or nil for "" and `none` (no control socket); unset keeps the default.
    private static func parseControlSocket(_ text: String?, key: String) throws -> String? {
        guard let text else { return ControlSocket.defaultPath }
        if text.isEmpty || text == "none" { return nil }
        guard text.hasPrefix("/") else {
            throw ConfigurationError(
                key: key,
                problem: "must be an absolute path, or \"\" (none) to disable the control socket; got '\(text)'"
            )
        }
        return text
    }

    private static func parseLogLevel(_ text: String?, key: String) throws -> Logger.Level? {
        guard let text else { return nil }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ConfigurationError(
                key: key,
                problem:
                    "must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")); got '\(text)'"
            )
        }
        return level
    }
}

/// Typed reads over a `ConfigReader` that report the key of a value that does not parse.
///
/// A number or flag that does not parse is noted in `problems` and read as its default, so the rest of the
/// configuration is still checked and every mistake is reported in one run.
final class ConfigurationReader {
    let reader: ConfigReader
    var problems: [ConfigurationError] = []

    init(reader: ConfigReader) {
        self.reader = reader
    }

    func string(_ key: String) throws -> String? {
        reader.string(forKey: ConfigKey(key))
    }

    /// A path: `~` and `~/…` expanded to the daemon user's home (see ``HomeDirectory``).
    func path(_ key: String) throws -> String? {
        try HomeDirectory.expandIfSet(string(key), key: key)
    }

    /// A list of paths, each expanded as ``path(_:)`` does.
    func paths(_ key: String) throws -> [String]? {
        try strings(key)?.map { try HomeDirectory.expand($0, key: key) }
    }

    func strings(_ key: String) throws -> [String]? {
        if let values = reader.stringArray(forKey: ConfigKey(key)) { return values }
        if let single = reader.string(forKey: ConfigKey(key)) {
            // Environment variables carry lists comma-separated; an empty one means "none".
            return single.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return nil
    }

    func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let raw = reader.string(forKey: ConfigKey(key)) else { return defaultValue }
        switch raw.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default:
            problems.append(ConfigurationError(key: key, problem: "must be true or false; got '\(raw)'"))
            return defaultValue
        }
    }

    /// An integer, with `validate` returning a problem description or nil when the value is fine.
    func integer<T: FixedWidthInteger>(
        _ key: String,
        default defaultValue: T,
        validate: (T) -> String? = { _ in nil }
    ) throws -> T {
        guard let raw = reader.string(forKey: ConfigKey(key)) else { return defaultValue }
        guard let value = T(raw.trimmingCharacters(in: .whitespaces)) else {
            problems.append(ConfigurationError(key: key, problem: "must be an integer; got '\(raw)'"))
            return defaultValue
        }
        if let problem = validate(value) {
            problems.append(ConfigurationError(key: key, problem: "\(problem); got \(value)"))
            return defaultValue
        }
        return value
    }
}
