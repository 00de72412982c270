import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// `workoutd fleet`: the fleet page and its API on one listener, reading the central database.
///
/// The listener is the hub page's (``WebListener``): the same TLS, Host check, connection limits and login rules.
public final class FleetServer: Service, Sendable {
    private let configuration: WebConfiguration
    private let database: FleetDatabase
    private let logger: Logger
    private let bound = Mutex<SocketAddress?>(nil)

    public init(configuration: WebConfiguration, database: FleetDatabase, logger: Logger) {
        self.configuration = configuration
        self.database = database
        var logger = logger
        logger[metadataKey: "component"] = "fleet"
        self.logger = logger
    }

    public var boundAddress: SocketAddress? { bound.withLock { $0 } }

    public struct NotStartedError: Error, CustomStringConvertible {
        public var description: String { "the fleet page could not listen (the log says why)" }
    }

    /// Serves until the service group shuts down; throws when the listener cannot start.
    public func run() async throws {
        guard let listen = configuration.listen else { throw NotStartedError() }
        let routes = FleetRoutes(configuration: configuration, database: database)
        guard
            let listener = await WebListener.start(
                configuration,
                listen: listen,
                logger: logger,
                makeRouter: { routes.router() },
                bound: { address in self.bound.withLock { $0 = address } }
            )
        else { throw NotStartedError() }
        // Until SIGTERM or SIGINT (the service group's graceful shutdown), or cancellation.
        try? await gracefulShutdown()
        await listener.stop()
    }
}
