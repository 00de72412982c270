import Foundation
import NIOSSL
import PostgresNIO

/// `replication.*`: where the central PostgreSQL is, who this hub is, and how shipping paces itself.
///
/// Defaults live here; the daemon's configuration only reads the keys and hands them over.
public struct ReplicationConfiguration: Sendable {
    /// How the connection is secured, as libpq's `sslmode` names it.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable
        /// TLS when the server offers it, plain otherwise (libpq's default).
        case prefer
        /// TLS or nothing; the certificate is not checked.
        case require
        /// TLS with the certificate checked against the system's CAs and the host name.
        case verifyFull = "verify-full"
    }

    public enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        case unixSocket(path: String)
    }

    public var endpoint: Endpoint
    public var username: String
    public var database: String?
    public var sslMode: SSLMode
    /// A password written in the URL itself; `passwordFile` wins when both are set.
    public var urlPassword: String?
    public var passwordFile: String?
    public var hubID: String
    /// Outbox entries per central transaction (each column of a batch is one array parameter, so the size
    /// is not bound by PostgreSQL's 65,535 parameters per statement).
    public var batchSize = 20000
    /// Batches start at least this far apart. A busy hub then ships a few large transactions a second
    /// instead of many small ones: each costs an fsync on the server and a turn of the shipper's reads and
    /// the server's statements, which, on a hub whose disk and cores also serve the devices, compete with
    /// their commits. An idle hub's first change still leaves at once; the lag it adds under load is far
    /// below issue 18's 1 s.
    public var batchInterval: Duration = .milliseconds(100)
    /// After a batch of at least ``busyBatchChanges`` changes (devices committing flat out), the next starts
    /// ``busyBatchInterval`` later instead: fewer, larger transactions while the devices need the CPU and the
    /// disk, at the cost of lag only then. At issue 18's 1,000 commands/s a batch holds about 100 changes.
    /// One a second: at 400 ms, `make bench`'s saturating rounds ran at 0.87–0.88 of replication off (the
    /// shipper's reads and the server's upserts of up to 20,000 rows a batch on the devices' two cores).
    public var busyBatchChanges = 1000
    public var busyBatchInterval: Duration = .seconds(1)
    public var initialRetryDelay: Duration = .milliseconds(200)
    public var maximumRetryDelay: Duration = .seconds(30)
    /// Shipped rows older than this are pruned from SQLite; nil keeps them for ever.
    public var retention: Duration?
    /// Connections this hub opens (`replication.max_connections`), at start, and keeps. Two let a batch's
    /// upserts run while the batch before it commits, which hides round trips to a distant server (`make
    /// bench`: lag p99 240 → 216 ms at 15 ms each way); more would wait on the commit order anyway. Each hub
    /// counts against the server's `max_connections` (100 by default): 50 hubs at 2.
    public var maximumConnections = 2
    public static let maximumConnectionsRange = 1...8
    public var connectTimeout: Duration = .seconds(10)
    /// Longest a connect, a migration or a batch may take before the connection is given up and retried.
    public var operationTimeout: Duration = .seconds(20)

    /// Parses a `postgresql://user[:password]@host[:port]/database?sslmode=…` URL. A `host=/dir` query
    /// item names a unix socket directory, as libpq reads it.
    public init(url text: String, passwordFile: String?, hubID: String) throws(ReplicationConfigurationError) {
        guard let components = URLComponents(string: text),
              let scheme = components.scheme, ["postgresql", "postgres"].contains(scheme) else {
            throw ReplicationConfigurationError("must be a postgresql:// URL, e.g. postgresql://workoutd@db.example/gym?sslmode=verify-full")
        }
        let items = components.queryItems ?? []
        func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
        let port = components.port ?? Int(item("port") ?? "") ?? 5432
        if let socketDirectory = item("host"), socketDirectory.hasPrefix("/") {
            endpoint = .unixSocket(path: "\(socketDirectory)/.s.PGSQL.\(port)")
        } else if let host = components.host, !host.isEmpty {
            endpoint = .tcp(host: host, port: port)
        } else {
            throw ReplicationConfigurationError("names no host; e.g. postgresql://workoutd@db.example/gym")
        }
        guard let user = components.user, !user.isEmpty else {
            throw ReplicationConfigurationError("names no user; e.g. postgresql://workoutd@db.example/gym")
        }
        username = user.removingPercentEncoding ?? user
        urlPassword = components.password.map { $0.removingPercentEncoding ?? $0 }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? nil : path
        if let mode = item("sslmode") {
            guard let parsed = SSLMode(rawValue: mode) else {
                throw ReplicationConfigurationError("sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")); got '\(mode)'")
            }
            sslMode = parsed
        } else {
            sslMode = .prefer
        }
        if case .unixSocket = endpoint, sslMode == .require || sslMode == .verifyFull {
            throw ReplicationConfigurationError("sslmode=\(sslMode.rawValue) cannot be used over a unix socket")
        }
        self.passwordFile = passwordFile.flatMap { $0.isEmpty ? nil : $0 }
        guard !hubID.isEmpty else { throw ReplicationConfigurationError("hub_id is empty") }
        self.hubID = hubID
    }

    /// What the server shows for this hub's connections (`pg_stat_activity.application_name`; at most 63 bytes kept).
    public var applicationName: String { "workoutd \(hubID)" }

    /// The server, for logs: never the password.
    public var redactedDescription: String {
        let target: String
        switch endpoint {
        case .tcp(let host, let port): target = "\(host):\(port)"
        case .unixSocket(let path): target = path
        }
        return "postgresql://\(username)\(urlPassword == nil ? "" : ":***")@\(target)/\(database ?? "")?sslmode=\(sslMode.rawValue)"
    }

    /// The password to use now: the file's first line (read again on every reload), or the URL's.
    public func readPassword() throws(ReplicationConfigurationError) -> String? {
        guard let passwordFile else { return urlPassword }
        do {
            let text = try String(contentsOfFile: passwordFile, encoding: .utf8)
            return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        } catch {
            throw ReplicationConfigurationError("password_file \(passwordFile) cannot be read (\(error.localizedDescription))")
        }
    }

    /// `/etc/machine-id`, the default hub id: stable for the life of the installation.
    public static func machineID(path: String = "/etc/machine-id") -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    func connectionConfiguration(password: String?) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch endpoint {
        case .unixSocket(let path):
            configuration = .init(unixSocketPath: path, username: username, password: password, database: database)
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            switch sslMode {
            case .disable:
                tls = .disable
            case .prefer, .require:
                var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
                tlsConfiguration.certificateVerification = .none
                let context = try NIOSSLContext(configuration: tlsConfiguration)
                tls = sslMode == .prefer ? .prefer(context) : .require(context)
            case .verifyFull:
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: host, port: port, username: username, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = .milliseconds(connectTimeout.inMilliseconds)
        // So the server's administrator sees which hub holds which connections (pg_stat_activity).
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }
}

public struct ReplicationConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
