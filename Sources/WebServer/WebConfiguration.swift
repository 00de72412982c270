import Foundation

/// The web page and HTTP API (`web.*`), with every default in one place.
public struct WebConfiguration: Sendable, Hashable {
    /// `web.listen`'s default: loopback only, where no login is needed (`off` turns the server off).
    public static let defaultListen = ListenAddress(host: "127.0.0.1", port: 8470)

    /// Where to listen; nil when `web.listen: off`.
    public var listen: ListenAddress? = Self.defaultListen
    /// `web.tls_certificate` and `web.tls_key` (PEM files, read when the configuration is): HTTPS when set.
    public var tls: TLSFiles?
    /// The login token (`web.token_credential` or `web.token_file`, read by the daemon).
    ///
    /// Required on any address other than loopback, where nothing is served without it.
    public var token: WebToken?
    /// `web.server_names`: host names the server answers besides its address (and `localhost` on loopback).
    public var serverNames: [String] = []
    /// How long a login lasts (`web.session_lifetime_s`); its event streams end with it.
    public var sessionLifetime: Duration = .seconds(12 * 3600)
    /// Sessions held at once; the oldest is dropped beyond this, so logins cannot grow memory.
    public var maximumSessions = 64
    /// Failed logins one client address may make before it must wait `loginLockout` (answered 429).
    ///
    /// An IPv6 client counts by its /64.
    public var loginAttempts = 5
    public var loginLockout: Duration = .seconds(60)
    /// Failed logins from all addresses together within `loginLockout` after which every address waits.
    public var globalLoginAttempts = 50
    /// Workouts per page of `/api/workouts`: when not asked, and at most.
    public var defaultPageSize = 100
    public var maximumPageSize = 1000
    /// Event bytes waiting for one event-stream client beyond this drop the client.
    ///
    /// The client reconnects, as on the control socket.
    public var maximumEventBacklogBytes = 1 << 20
    /// Event streams open at once, from one client address and from all.
    public var maximumEventStreamsPerAddress = 8
    public var maximumEventStreams = 32
    /// A stream with no event for this long gets a comment line, so a peer that went away is noticed.
    public var eventHeartbeat: Duration = .seconds(15)
    /// Connections at once; more wait in the listen backlog.
    public var maximumConnections = 64
    /// Connections one client address may hold at once; more are closed as they arrive.
    public var maximumConnectionsPerAddress = 16
    /// How long a connection may wait for a request, headers and body, before it is closed.
    ///
    /// The first request must arrive within `requestTimeout` of the connection opening, every later one within
    /// `idleTimeout` of the answer before it.
    public var requestTimeout: Duration = .seconds(5)
    public var idleTimeout: Duration = .seconds(15)

    /// The configuration section these keys are read from, as messages name it.
    ///
    /// `web`, or `fleet` for the fleet page.
    public var section = "web"
    /// What the log and the login page call this server.
    public var serviceName = "web server"
    /// The page's title and heading.
    public var title = "workoutd"

    public init() {}

    /// Whether a request needs a login: on every address but loopback.
    public var requiresLogin: Bool { !(listen?.isLoopback ?? true) }

    /// PEM certificate chain and private key.
    ///
    /// Their paths, and their contents as read, so a reload that finds them changed restarts the listener with them.
    public struct TLSFiles: Sendable, Hashable, CustomStringConvertible {
        public var certificate: String
        public var key: String
        public var certificatePEM: [UInt8]
        /// Never printed.
        public var keyPEM: [UInt8]

        public init(certificate: String, key: String, certificatePEM: [UInt8] = [], keyPEM: [UInt8] = []) {
            self.certificate = certificate
            self.key = key
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
        }

        public var description: String { "certificate \(certificate), key \(key)" }
    }
}

/// The login token: never printed, compared only in constant time.
public struct WebToken: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]
    public init(_ text: String) { bytes = Array(text.utf8) }
    public var description: String { "***" }

    /// Whether `candidate` is the token, in time that depends on the lengths only.
    ///
    /// Never on where they differ.
    public func matches(_ candidate: some Collection<UInt8>) -> Bool {
        ConstantTime.equal(bytes, Array(candidate))
    }
}
