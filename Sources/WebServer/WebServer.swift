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
    private let updates: AsyncStream<WebConfiguration>
    private let continuation: AsyncStream<WebConfiguration>.Continuation
    /// The address the running listener is bound to (its real port when `web.listen` asked for port 0).
    ///
    /// Nil when off.
    private let bound = Mutex<SocketAddress?>(nil)

    public init(configuration: WebConfiguration, responder: ControlResponder, logger: Logger) {
        self.responder = responder
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

    private struct RunningListener {
        var group: ServiceGroup
        var task: Task<Void, Never>
        var streams: EventStreams

        func stop() async {
            streams.finishAll()
            await group.triggerGracefulShutdown()
            await task.value
        }
    }

    private func start(_ configuration: WebConfiguration, listen: ListenAddress) async -> RunningListener? {
        let logger = {
            var logger = self.logger
            logger[metadataKey: "web_listen"] = "\(listen)"
            return logger
        }()
        if configuration.requiresLogin, configuration.token == nil {
            logger.error(
                "web server not started: \(listen) is not loopback, so it needs a login token (web.token_credential or web.token_file)"
            )
            return nil
        }
        let streams = EventStreams(responder: responder, limit: configuration.maximumEventBacklogBytes)
        let server: any Service
        let started = AsyncStream<Bool>.makeStream()
        do {
            let routes = WebRoutes(configuration: configuration, responder: responder, streams: streams)
            // Built again for the first request, not kept from start: an idle hub that nobody opens the page on
            // never touches the router's types, whose set-up would otherwise stay resident.
            let responder = LazyResponder { try routes.router().buildResponder() }
            let builder = try Self.serverBuilder(configuration)
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
                    let response: Response
                    do {
                        response = try await responder.get().respond(to: request, context: context)
                    } catch {
                        var failed = WebErrors.response(
                            .internalServerError,
                            code: "unavailable",
                            "The request failed."
                        )
                        SecurityHeadersMiddleware<WebRequestContext>.apply(to: &failed.headers)
                        response = failed
                    }
                    try await writer.write(response: response.head, body: response.body)
                },
                onServerRunning: { channel in
                    self.bound.withLock { $0 = channel.localAddress }
                    started.continuation.yield(true)
                    started.continuation.finish()
                }
            )
        } catch {
            logger.error("web server not started", metadata: ["error": "\(error)"])
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
                    "web server unavailable; the page and API will not answer",
                    metadata: ["error": "\(error)"]
                )
            }
            self.bound.withLock { $0 = nil }
            started.continuation.finish()
        }
        var isUp = false
        for await up in started.stream { isUp = up }
        guard isUp else {
            await task.value
            return nil
        }
        logger.info(
            "web server listening",
            metadata: [
                "address": "\(boundAddress.map { "\($0.ipAddress ?? ""):\($0.port ?? 0)" } ?? "")",
                "login": "\(configuration.requiresLogin ? "required" : "not required (loopback)")",
                "tls": "\(configuration.tls != nil)",
            ]
        )
        return RunningListener(group: group, task: task, streams: streams)
    }

    private static func serverBuilder(_ configuration: WebConfiguration) throws -> HTTPServerBuilder {
        let http = HTTPServerBuilder.http1()
        guard let files = configuration.tls else { return http }
        let certificates = try NIOSSLCertificate.fromPEMFile(files.certificate).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(file: files.key, format: .pem)
        let tls = TLSConfiguration.makeServerConfiguration(certificateChain: certificates, privateKey: .privateKey(key))
        return try .tls(http, tlsConfiguration: tls)
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
