import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// Opens the link to the central server and secures it before postgres-nio sees it.
///
/// The TCP connection, PostgreSQL's SSLRequest, the TLS handshake with this hub's verification
/// (``ReplicationConfiguration/sslMode``), and, on a link whose server identity was not verified, the
/// ``PasswordGuardHandler``. postgres-nio then runs the start-up on the channel as handed over (`establishedChannel`,
/// no TLS of its own).
///
/// Why not postgres-nio's own TLS: it answers a cleartext or MD5 password request on any link, and its
/// handshake failure reaches us as an opaque connection error; here each step fails with what a person can act on.
enum CentralChannel {
    /// A link to `endpoint`, one of the configuration's hosts.
    ///
    /// Its certificate is checked against that host's own name.
    static func open(
        _ configuration: ReplicationConfiguration,
        to endpoint: ReplicationConfiguration.Endpoint,
        on eventLoop: any EventLoop
    ) async throws -> any Channel {
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.milliseconds(configuration.connectTimeout.inMilliseconds))
            .channelOption(.socketOption(.so_keepalive), value: 1)
        let channel: any Channel
        let host: String
        switch endpoint {
        case .unixSocket(let path):
            // A local server: no TLS, and a password may be sent (nothing of the link crosses a network).
            do {
                return try await bootstrap.connect(unixDomainSocketPath: path).get()
            } catch {
                throw CentralLinkError.connect(to: path, error)
            }
        case .tcp(let name, let port):
            host = name
            do {
                channel = try await bootstrap.connect(host: host, port: port).get()
            } catch {
                throw CentralLinkError.connect(to: "\(host):\(port)", error)
            }
        }
        // Until postgres-nio takes over with its own deadline, a server that answers nothing is given up here.
        let deadline = eventLoop.scheduleTask(in: .milliseconds(configuration.connectTimeout.inMilliseconds)) {
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        do {
            try await withTaskCancellationHandler {
                try await secure(channel, host: host, configuration)
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return channel
    }

    private static func secure(
        _ channel: any Channel,
        host: String,
        _ configuration: ReplicationConfiguration
    ) async throws {
        let eventLoop = channel.eventLoop
        if let context = configuration.tlsContext {
            // Handlers are made and added on the channel's event loop; only their promises leave it.
            let offered = try await eventLoop.flatSubmit {
                let answer = eventLoop.makePromise(of: Bool.self)
                do {
                    try channel.pipeline.syncOperations.addHandler(
                        SSLRequestHandler(answer: answer),
                        name: Self.sslRequestName
                    )
                } catch {
                    answer.fail(error)
                }
                return answer.futureResult
            }.get()
            guard offered else { throw CentralLinkError.tlsNotOffered }
            let serverName = host.isIPAddress ? nil : host
            let handshake = try await eventLoop.submit {
                let operations = channel.pipeline.syncOperations
                operations.removeHandler(context: try operations.context(name: Self.sslRequestName), promise: nil)
                // A host name is sent (SNI) and checked against the certificate; an IP address is checked
                // against the certificate's IP entries instead (NIOSSL takes it from the connection).
                try operations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: serverName))
                let done = eventLoop.makePromise(of: Void.self)
                try operations.addHandler(TLSHandshakeHandler(done: done), name: Self.handshakeName)
                return done.futureResult
            }.get()
            do {
                try await handshake.get()
            } catch {
                throw CentralLinkError.handshake(error, mode: configuration.sslMode)
            }
            try await channel.pipeline.removeHandler(name: Self.handshakeName).get()
        }
        if !configuration.sendsPasswordInTheClear {
            try await eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(PasswordGuardHandler())
            }.get()
        }
    }

    private static let sslRequestName = "workoutd-ssl-request"
    private static let handshakeName = "workoutd-tls-handshake"
}

extension ReplicationConfiguration {
    /// A new connection to `endpoint`, one of the central servers.
    ///
    /// The link opened and secured by ``CentralChannel``, then postgres-nio's start-up (authentication) on it.
    func connect(
        to endpoint: Endpoint,
        password: String?,
        id: Int,
        logger: Logger
    ) async throws -> PostgresConnection {
        let channel = try await CentralChannel.open(self, to: endpoint, on: MultiThreadedEventLoopGroup.singleton.any())
        return try await PostgresConnection.connect(
            on: channel.eventLoop,
            configuration: connectionConfiguration(channel: channel, password: password),
            id: id,
            logger: logger
        )
    }
}

/// What went wrong while opening the link, as `status` shows it.
enum CentralLinkError: Error, CustomStringConvertible {
    case connect(to: String, any Error)
    case tlsNotOffered
    case unexpectedTLSAnswer(String)
    case closedDuringStartup
    case handshake(any Error, mode: ReplicationConfiguration.SSLMode)

    var description: String {
        switch self {
        case .connect(let target, let error):
            return "connection failed: \(target): \(error)"
        case .tlsNotOffered:
            return "the server does not offer TLS, but sslmode requires it"
        case .unexpectedTLSAnswer(let what):
            return "the server answered the TLS request with \(what); connection closed"
        case .closedDuringStartup:
            return "the server closed the connection during the TLS start-up (or gave no answer in time)"
        case .handshake(let error, let mode):
            let detail = "\(error)"
            if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
                return
                    "TLS: certificate verification failed: the server's certificate is not for this host (sslmode=\(mode.rawValue)); \(detail)"
            }
            if detail.contains("CERTIFICATE_VERIFY_FAILED") {
                // BoringSSL's own text adds only its source line.
                return
                    "TLS: certificate verification failed: the server's certificate is not signed by a CA this hub trusts, or is expired "
                    + "or invalid (sslmode=\(mode.rawValue); a private CA is named with sslrootcert=<file>)"
            }
            if let error = error as? CentralLinkError, case .closedDuringStartup = error { return error.description }
            return "TLS handshake failed: \(detail)"
        }
    }
}

extension String {
    /// Whether this is an IPv4 or IPv6 address (not valid as a TLS server name).
    var isIPAddress: Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, self, &v4) == 1 || inet_pton(AF_INET6, self, &v6) == 1
    }
}
