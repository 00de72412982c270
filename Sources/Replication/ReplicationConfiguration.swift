import Foundation
import NIOCore
import NIOSSL
import PostgresNIO

/// `replication.*`: where the central PostgreSQL is, who this hub is, and how shipping paces itself.
///
/// Defaults live here; the daemon's configuration only reads the keys and hands them over.
public struct ReplicationConfiguration: Sendable {
    /// How the connection is secured, as libpq's `sslmode` names it.
    ///
    /// `verify-full` unless the URL says otherwise; `prefer` and `allow` are refused (a man in the middle
    /// answers "no TLS" and gets a plain link), `disable` must be written out.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable
        /// Refused: plain unless the server insists.
        case allow
        /// Refused: TLS when the server offers it, plain otherwise (libpq's default).
        case prefer
        /// TLS, the certificate not checked: encrypted, but anyone on the path can pose as the server. With
        /// `sslrootcert` it checks the chain like `verify-ca` (as libpq does).
        case require
        /// TLS with the certificate checked against the CA file `sslrootcert` names; the host name is not.
        case verifyCA = "verify-ca"
        /// TLS with the certificate checked against the system's CAs (or `sslrootcert`) and the host name.
        case verifyFull = "verify-full"
    }

    /// Whether the server this hub talks to has proved who it is, for `status` (`server_identity`).
    public enum ServerIdentity: String, Sendable {
        /// Its certificate was checked (`verify-full`, `verify-ca`).
        case verified
        /// `require` or `disable` over TCP: anyone on the path can pose as the server.
        case unverified
        /// A unix socket: the server is on this machine, the link crosses no network.
        case local
    }

    public enum Endpoint: Sendable, Hashable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        case unixSocket(path: String)

        var isUnixSocket: Bool { if case .unixSocket = self { true } else { false } }

        /// `host:port` (`[v6]:port`) or the socket's path, as `status` names the host in use.
        public var description: String {
            switch self {
            case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            case .unixSocket(let path): path
            }
        }
    }

    /// libpq's `target_session_attrs`: which server of the list is good enough.
    public enum TargetSessionAttributes: String, Sendable, CaseIterable {
        /// The first server that accepts writes: a standby is passed over.
        ///
        /// `SHOW transaction_read_only` must say `off`.
        case readWrite = "read-write"
        /// The first server that accepts the connection.
        case any
    }

    /// Where the password comes from.
    public enum PasswordSource: Sendable, Hashable {
        /// Written in `postgres_url`, or none at all.
        case url
        /// `replication.password_file`: a file only its owner may read (0600 or 0400).
        case file(String)
        /// `replication.password_credential`: a systemd credential (`LoadCredential=`).
        ///
        /// It is read from `$CREDENTIALS_DIRECTORY/<name>`, which systemd makes readable by the service alone.
        case credential(String)
    }

    /// The servers in the order they are tried; never empty.
    public var endpoints: [Endpoint]
    /// `read-write` by default when there are several hosts, `any` for one (libpq's default).
    public var targetSessionAttributes: TargetSessionAttributes
    public var username: String
    public var database: String?
    public var sslMode: SSLMode
    /// `sslrootcert=<file>`: the CAs to check the server's certificate against instead of the system's.
    public var rootCertificateFile: String?
    /// A password written in the URL itself; a password file or credential wins when set.
    public var urlPassword: String?
    public var passwordSource: PasswordSource = .url
    /// The environment's `$CREDENTIALS_DIRECTORY` (set by systemd for a unit with `LoadCredential=`).
    public var credentialsDirectory: String? = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"]
    /// `replication.allow_password_without_verified_server`: send a password to an unverified server.
    ///
    /// A cleartext or MD5 password then goes even to a server whose identity was not verified (`require`, `disable`).
    /// Off: such a request fails the connection.
    public var allowPasswordWithoutVerifiedServer = false
    /// Set when the URL holds a password and the file it was read from is readable by others.
    ///
    /// Warned at start.
    public var urlPasswordExposedIn: String?
    /// The TLS context of `verify-full`, `verify-ca` and `require`, made once (with `sslrootcert` loaded).
    let tlsContext: NIOSSLContext?
    public var hubID: String
    /// Outbox entries per central transaction.
    ///
    /// Each column of a batch is one array parameter, so the size is not bound by PostgreSQL's 65,535 parameters per
    /// statement.
    public var batchSize = 20000
    /// Batches start at least this far apart. A busy hub then ships a few large transactions a second
    /// instead of many small ones: each costs an fsync on the server and a turn of the shipper's reads and
    /// the server's statements, which, on a hub whose disk and cores also serve the devices, compete with
    /// their commits. An idle hub's first change still leaves at once; the lag it adds under load stays far
    /// below the one-second lag replication is held to.
    public var batchInterval: Duration = .milliseconds(100)
    /// After a batch of at least ``busyBatchChanges`` changes, the next starts ``busyBatchInterval`` later.
    ///
    /// Such batches mean devices are committing flat out: fewer, larger transactions while the devices need the CPU and
    /// the disk, at the cost of lag only then. At the load replication is sized for, a batch holds a tenth of this. One
    /// a second: shorter intervals let the shipper's reads and the server's large upserts take the devices' cores away
    /// from them under saturating load (docs/decisions/0010-replication-batching.md).
    public var busyBatchChanges = 1000
    public var busyBatchInterval: Duration = .seconds(1)
    public var initialRetryDelay: Duration = .milliseconds(200)
    public var maximumRetryDelay: Duration = .seconds(30)
    /// Shipped rows older than this are pruned from SQLite; nil keeps them for ever.
    public var retention: Duration?
    /// Connections this hub opens (`replication.max_connections`), at start, and keeps.
    ///
    /// One by default: a second lets a batch's upserts run while the batch before it commits, which hides only some
    /// round trips to a distant server, and every hub's second connection is one more backend on a server that serves
    /// a whole fleet (docs/decisions/0019-one-connection-per-hub.md). More would wait on the commit order anyway.
    public var maximumConnections = 1
    public static let maximumConnectionsRange = 1...8
    /// How often the hub writes its row of `hubs` (`replication.heartbeat_interval_s`).
    ///
    /// The fleet page calls a hub offline once three have been missed.
    public var heartbeatInterval: Duration = .seconds(30)
    public static let heartbeatIntervalRange = 1...3600
    /// What the fleet page calls this hub (`replication.hub_name`); the host name unless configured.
    public var hubName: String
    public var connectTimeout: Duration = .seconds(10)
    /// Longest a connect, a migration or a batch may take before the connection is given up and retried.
    public var operationTimeout: Duration = .seconds(20)

    /// Parses `replication.postgres_url`, with one host or several.
    ///
    /// A `postgresql://` URL or libpq key/value settings (``PostgresConnectionString``). A host that is a directory
    /// (`host=/dir`) names a unix socket, as libpq reads it.
    public init(url text: String, passwordFile: String?, hubID: String) throws(ReplicationConfigurationError) {
        let parsed = try PostgresConnectionString(parsing: text)
        endpoints = parsed.hosts.map { host in
            host.isSocketDirectory
                ? .unixSocket(path: "\(host.name)/.s.PGSQL.\(host.port)") : .tcp(host: host.name, port: host.port)
        }
        guard let user = parsed.user else {
            throw ReplicationConfigurationError("names no user; e.g. postgresql://workoutd@db.example/gym")
        }
        username = user
        urlPassword = parsed.password
        database = parsed.database
        let item = { (name: String) in parsed.options[name] }
        if let attributes = item("target_session_attrs") {
            guard let value = TargetSessionAttributes(rawValue: attributes) else {
                throw ReplicationConfigurationError(
                    "target_session_attrs must be read-write or any; got '\(attributes)' (the hub writes, so read-only, standby and the like cannot serve it)"
                )
            }
            targetSessionAttributes = value
        } else {
            targetSessionAttributes = endpoints.count > 1 ? .readWrite : .any
        }
        // Only when every host is a socket: TLS settings then have nothing to apply to.
        let local = endpoints.allSatisfy(\.isUnixSocket)
        if let mode = item("sslmode") {
            guard let chosen = SSLMode(rawValue: mode) else {
                throw ReplicationConfigurationError(
                    "sslmode must be one of disable, require, verify-ca, verify-full; got '\(mode)'"
                )
            }
            sslMode = chosen
        } else {
            // A socket is on this machine: nothing to encrypt, no one in between. Over TCP, the safe mode.
            sslMode = local ? .disable : .verifyFull
        }
        if sslMode == .prefer || sslMode == .allow {
            throw ReplicationConfigurationError(
                "sslmode=\(sslMode.rawValue) is refused as unsafe: anyone on the path can answer \"no TLS\" and read the link, password included. "
                    + "Use verify-full (the default; sslrootcert=<CA file> for a private CA), require (encrypted, server not verified) or, on a trusted network, disable"
            )
        }
        if local, sslMode != .disable {
            throw ReplicationConfigurationError("sslmode=\(sslMode.rawValue) cannot be used over a unix socket")
        }
        rootCertificateFile = item("sslrootcert").flatMap { $0.isEmpty || $0 == "system" ? nil : $0 }
        if sslMode == .verifyCA, rootCertificateFile == nil {
            // With the system's CAs, verify-ca would accept any site's certificate; libpq refuses that too.
            throw ReplicationConfigurationError(
                "sslmode=verify-ca needs sslrootcert=<file of the CA that signed the server's certificate>; with the system's CAs use verify-full"
            )
        }
        tlsContext = try Self.makeTLSContext(sslMode, rootCertificateFile: rootCertificateFile)
        if let passwordFile, !passwordFile.isEmpty { passwordSource = .file(passwordFile) }
        guard !hubID.isEmpty else { throw ReplicationConfigurationError("hub_id is empty") }
        self.hubID = hubID
        hubName = Self.hostName() ?? hubID
    }

    private static func makeTLSContext(
        _ mode: SSLMode,
        rootCertificateFile: String?
    ) throws(ReplicationConfigurationError) -> NIOSSLContext? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable, .allow, .prefer: return nil
        case .require: tls.certificateVerification = rootCertificateFile == nil ? .none : .noHostnameVerification
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        do {
            if let rootCertificateFile {
                let certificates = try NIOSSLCertificate.fromPEMFile(rootCertificateFile)
                guard !certificates.isEmpty else {
                    throw ReplicationConfigurationError("sslrootcert \(rootCertificateFile) holds no PEM certificate")
                }
                tls.trustRoots = .certificates(certificates)
            }
            return try NIOSSLContext(configuration: tls)
        } catch let error as ReplicationConfigurationError {
            throw error
        } catch {
            throw ReplicationConfigurationError(
                "sslrootcert \(rootCertificateFile ?? "system") cannot be loaded (\(error))"
            )
        }
    }

    /// Whether the server's identity is checked on this link (see ``ServerIdentity``).
    public var serverIdentity: ServerIdentity {
        if endpoints.allSatisfy(\.isUnixSocket) { return .local }
        switch sslMode {
        case .verifyFull, .verifyCA: return .verified
        case .require: return rootCertificateFile == nil ? .unverified : .verified
        case .disable, .allow, .prefer: return .unverified
        }
    }

    /// Whether a server's request for a cleartext or MD5 password is answered.
    ///
    /// SCRAM always is: it never gives the password away, and proves the server knows it.
    public var sendsPasswordInTheClear: Bool {
        serverIdentity != .unverified || allowPasswordWithoutVerifiedServer
    }

    /// What the log says at start, at warning: links whose server is not verified, passwords in sight.
    public var startWarnings: [String] {
        var warnings: [String] = []
        if serverIdentity == .unverified {
            warnings.append(
                sslMode == .require
                    ? "replication.postgres_url has sslmode=require: the link is encrypted, but the server's identity is not verified and anyone on the path can pose as it (use verify-full, with sslrootcert=<CA file> for a private CA)"
                    : "replication.postgres_url has sslmode=disable: the link is neither encrypted nor verified; use it on a trusted network only"
            )
            if allowPasswordWithoutVerifiedServer {
                warnings.append(
                    "replication.allow_password_without_verified_server is on: a server that asks for a cleartext or MD5 password gets it over this unverified link"
                )
            }
        }
        if let urlPasswordExposedIn, urlPassword != nil, passwordSource == .url {
            warnings.append(
                "replication.postgres_url holds a password and \(urlPasswordExposedIn) is readable by others; use replication.password_credential (LoadCredential=) or a 0600 replication.password_file instead"
            )
        }
        return warnings
    }

    /// What the server shows for this hub's connections (`pg_stat_activity.application_name`).
    ///
    /// At most 63 bytes are kept.
    public var applicationName: String { "workoutd \(hubID)" }

    /// What the log and `status` call the server: never the password.
    public var redactedDescription: String {
        let target = endpoints.map(\.description).joined(separator: ",")
        let root = rootCertificateFile.map { "&sslrootcert=\($0)" } ?? ""
        // Said only when it differs from what one host implies, so a one-host server reads as before.
        let attributes =
            targetSessionAttributes == (endpoints.count > 1 ? .readWrite : .any)
            ? "" : "&target_session_attrs=\(targetSessionAttributes.rawValue)"
        return
            "postgresql://\(username)\(urlPassword == nil ? "" : ":***")@\(target)/\(database ?? "")?sslmode=\(sslMode.rawValue)\(root)\(attributes)"
    }

    /// The configuration key that names where the password comes from, for messages.
    public var passwordKey: String {
        switch passwordSource {
        case .url: "replication.postgres_url"
        case .file: "replication.password_file"
        case .credential: "replication.password_credential"
        }
    }

    /// The password to use now: the file's or credential's first line, or the URL's.
    ///
    /// The file or credential is read again on every reload.
    ///
    /// A password file readable by group or others is refused: under `DynamicUser=yes` a root-only file
    /// cannot be read, and the way out is a credential (`LoadCredential=`), not a world-readable secret.
    public func readPassword() throws(ReplicationConfigurationError) -> String? {
        let path: String
        switch passwordSource {
        case .url:
            return urlPassword
        case .file(let file):
            path = file
        case .credential(let name):
            guard let credentialsDirectory, !credentialsDirectory.isEmpty else {
                throw ReplicationConfigurationError(
                    "names credential '\(name)', but $CREDENTIALS_DIRECTORY is not set: the unit needs LoadCredential=\(name):/etc/workoutd/\(name)",
                    key: passwordKey
                )
            }
            path = credentialsDirectory + "/" + name
        }
        let text: String
        do {
            text = try PrivateFile.read(
                path,
                requirePrivate: { if case .file = passwordSource { true } else { false } }(),
                credentialKey: "replication.password_credential"
            )
        } catch {
            throw ReplicationConfigurationError(error.description, key: passwordKey)
        }
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
    /// The machine's host name, the default ``hubName``.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// `/etc/machine-id`, the default hub id: stable for the life of the installation.
    public static func machineID(path: String = "/etc/machine-id") -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// postgres-nio's configuration for a channel ``CentralChannel`` opened and secured.
    ///
    /// TLS and the password guard are already in its pipeline, so postgres-nio is told no TLS.
    func connectionConfiguration(channel: any Channel, password: String?) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            establishedChannel: channel,
            tls: .disable,
            username: username,
            password: password,
            database: database
        )
        configuration.options.connectTimeout = .milliseconds(connectTimeout.inMilliseconds)
        // So the server's administrator sees which hub holds which connections (pg_stat_activity).
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }
}

public struct ReplicationConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The configuration key at fault when it is not the one the caller reads.
    ///
    /// For example `replication.password_file`.
    public var key: String?
    public init(_ description: String, key: String? = nil) {
        self.description = description
        self.key = key
    }
}
