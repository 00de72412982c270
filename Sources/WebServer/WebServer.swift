import ControlPlane
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// The web page and HTTP API (`web.listen`), answering from the control socket's responder.
///
/// One service for the daemon's life; a reload hands it a new configuration (``update(_:)``) and it stops,
/// starts or moves the listener. A listener that cannot be bound (port taken, bad certificate) is logged and
/// the daemon keeps serving its devices, as with the control socket.
public final class WebServer: Service, Sendable {
    private let responder: ControlResponder
    private let logger: Logger
    /// Gives freed memory back to the kernel after a burst of event streams ended.
    ///
    /// The daemon passes its allocator trim.
    private let releaseMemory: @Sendable () -> Void
    private let updates: AsyncStream<WebConfiguration>
    private let continuation: AsyncStream<WebConfiguration>.Continuation
    /// The address the running listener is bound to (its real port when `web.listen` asked for port 0).
    ///
    /// Nil when off.
    private let bound = Mutex<SocketAddress?>(nil)

    public init(
        configuration: WebConfiguration,
        responder: ControlResponder,
        logger: Logger,
        releaseMemory: @escaping @Sendable () -> Void = {}
    ) {
        self.responder = responder
        self.releaseMemory = releaseMemory
        var logger = logger
        logger[metadataKey: "component"] = "web"
        self.logger = logger
        (updates, continuation) = AsyncStream.makeStream(
            of: WebConfiguration.self,
            bufferingPolicy: .bufferingNewest(1)
        )
        continuation.yield(configuration)
    }

    /// A reload's `web.*`, applied by the running service.
    ///
    /// The listener restarts only when something changed.
    public func update(_ configuration: WebConfiguration) {
        continuation.yield(configuration)
    }

    public var boundAddress: SocketAddress? { bound.withLock { $0 } }

    public func run() async throws {
        var current: WebConfiguration?
        var running: RunningListener?
        for await configuration in updates.cancelOnGracefulShutdown() {
            // The same configuration again changes nothing, unless its listener could not start (the port was
            // taken): then a reload tries again.
            guard configuration != current || (running == nil && configuration.listen != nil) else { continue }
            current = configuration
            await running?.stop()
            running = nil
            if let listen = configuration.listen {
                running = await start(configuration, listen: listen)
            } else {
                logger.info("web server off (web.listen: off)")
            }
        }
        await running?.stop()
    }

    private func start(_ configuration: WebConfiguration, listen: ListenAddress) async -> RunningListener? {
        let streams = EventStreams(
            responder: responder,
            limits: .init(
                perAddress: configuration.maximumEventStreamsPerAddress,
                total: configuration.maximumEventStreams,
                backlogBytes: configuration.maximumEventBacklogBytes,
                heartbeat: configuration.eventHeartbeat
            ),
            releaseMemory: releaseMemory
        )
        let routes = WebRoutes(configuration: configuration, responder: responder, streams: streams)
        let listener = await WebListener.start(
            configuration,
            listen: listen,
            logger: logger,
            makeRouter: { try routes.router() },
            bound: { address in self.bound.withLock { $0 = address } }
        )
        guard let listener else { return nil }
        return RunningListener(listener: listener, streams: streams)
    }

    private struct RunningListener {
        var listener: WebListener
        var streams: EventStreams

        func stop() async {
            streams.finishAll()
            await listener.stop()
        }
    }
}

/// One running listener with the hub page's rules, for the hub page and the fleet page alike.
///
/// Its address, TLS, the Host check, the connection limits and timeouts, the security headers on every answer. What
/// it answers is the router `makeRouter` builds, with its own login gate.
struct WebListener: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, Never>

    func stop() async {
        await group.triggerGracefulShutdown()
        await task.value
    }

    /// The listener, started; nil (logged) when it cannot be.
    ///
    /// - Parameter bound: told the address once bound, and nil when the listener ends.
    static func start(
        _ configuration: WebConfiguration,
        listen: ListenAddress,
        logger: Logger,
        makeRouter: @escaping @Sendable () throws -> Router<WebRequestContext>,
        bound: @escaping @Sendable (SocketAddress?) -> Void
    ) async -> WebListener? {
        let section = configuration.section
        let what = configuration.serviceName
        let logger = {
            var logger = logger
            logger[metadataKey: "\(section)_listen"] = "\(listen)"
            return logger
        }()
        if configuration.requiresLogin, configuration.token == nil {
            logger.error(
                "\(what) not started: \(listen) is not loopback, so it needs a login token (\(section).token_credential or \(section).token_file)"
            )
            return nil
        }
        let server: any Service
        let started = AsyncStream<SocketAddress?>.makeStream()
        let hosts = HostCheck(listen: listen, serverNames: configuration.serverNames)
        do {
            // Built again for the first request, not kept from start: an idle hub that nobody opens the page on
            // never touches the router's types, whose set-up would otherwise stay resident.
            let responder = LazyResponder { try makeRouter().buildResponder() }
            let builder = try Self.serverBuilder(
                configuration,
                counts: ConnectionCounts(
                    limitPerAddress: configuration.maximumConnectionsPerAddress
                )
            )
            // HummingbirdCore's server as it is, without Application's once-a-second Date-header timer: an idle
            // hub stays idle with the page on (the Date header is optional for a server without a clock it trusts).
            server = try builder.buildServer(
                configuration: ServerConfiguration(
                    address: .hostname(listen.host, port: listen.port),
                    serverName: nil,
                    availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections)
                ),
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: logger,
                responder: { request, writer, channel in
                    let context = WebRequestContext(source: .init(channel: channel, logger: logger))
                    var response: Response
                    switch hosts.verdict(host: request.head.authority, local: channel.localAddress) {
                    case .allowed:
                        let connection = RequestScope.Connection(
                            client: ClientAddress(channel.remoteAddress),
                            closed: channel.closeFuture
                        )
                        do {
                            response = try await RequestScope.$connection.withValue(connection) {
                                try await responder.get().respond(to: request, context: context)
                            }
                        } catch {
                            response = WebErrors.response(
                                .internalServerError,
                                code: "unavailable",
                                "The request failed."
                            )
                        }
                    case .missing:
                        response = WebErrors.response(.badRequest, code: "bad_request", "The request names no Host.")
                    case .misdirected:
                        response = WebErrors.response(
                            .misdirectedRequest,
                            code: "misdirected_request",
                            "This server does not answer for that Host (\(section).server_names lists the names it does)."
                        )
                    }
                    SecurityHeadersMiddleware<WebRequestContext>.apply(to: &response.headers)
                    try await writer.write(response: response.head, body: response.body)
                },
                onServerRunning: { channel in
                    bound(channel.localAddress)
                    started.continuation.yield(channel.localAddress)
                    started.continuation.finish()
                }
            )
        } catch {
            logger.error("\(what) not started", metadata: ["error": "\(error)"])
            return nil
        }
        var groupConfiguration = ServiceGroupConfiguration(services: [.init(service: server)], logger: logger)
        // Connections still open (an event stream) are cut after this, so a reload or stop never hangs.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(2)
        groupConfiguration.maximumCancellationDuration = .seconds(2)
        let group = ServiceGroup(configuration: groupConfiguration)
        let task = Task { [logger] in
            do {
                try await group.run()
            } catch {
                logger.error(
                    "\(what) unavailable; the page and API will not answer",
                    metadata: ["error": "\(error)"]
                )
            }
            bound(nil)
            started.continuation.finish()
        }
        var isUp = false
        var address: SocketAddress?
        for await running in started.stream {
            isUp = true
            address = running
        }
        guard isUp else {
            await task.value
            return nil
        }
        logger.info(
            "\(what) listening",
            metadata: [
                "address": "\(address.map { "\($0.ipAddress ?? ""):\($0.port ?? 0)" } ?? "")",
                "login": "\(configuration.requiresLogin ? "required" : "not required (loopback)")",
                "tls": "\(configuration.tls != nil)",
            ]
        )
        if configuration.requiresLogin, configuration.tls == nil {
            logger.warning(
                "\(what) on a network address without TLS: the login token and session cookies cross the network in clear; set \(section).tls_certificate and \(section).tls_key"
            )
        }
        return WebListener(group: group, task: task)
    }

    private static func serverBuilder(
        _ configuration: WebConfiguration,
        counts: ConnectionCounts
    ) throws -> HTTPServerBuilder {
        let requestTimeout = configuration.requestTimeout
        let idleTimeout = configuration.idleTimeout
        let http = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [
                    ConnectionGuard(counts: counts, requestTimeout: requestTimeout, idleTimeout: idleTimeout)
                ]
            )
        )
        guard let files = configuration.tls else { return http }
        return try .tls(http, tlsConfiguration: try files.serverConfiguration())
    }
}

/// A value made on first use and kept (the router's responder).
final class LazyResponder<Value: Sendable>: Sendable {
    private let make: @Sendable () throws -> Value
    private let value = Mutex<Value?>(nil)

    init(_ make: @escaping @Sendable () throws -> Value) { self.make = make }

    func get() throws -> Value {
        try value.withLock { value in
            if let value { return value }
            let made = try make()
            value = made
            return made
        }
    }
}
