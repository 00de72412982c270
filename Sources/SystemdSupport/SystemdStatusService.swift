import Logging
import ServiceLifecycle

/// Reports the daemon's life to systemd.
///
/// `READY=1` once start-up is really done, a `STATUS=` line kept current while it runs, and `STOPPING=1` as soon as
/// graceful shutdown begins.
///
/// The status line is computed when something that it describes changed (the `changes` stream yields),
/// never on a timer: an idle hub wakes for nothing. Started by hand (no `NOTIFY_SOCKET`) it computes none.
///
/// Put it last in the `ServiceGroup`: graceful shutdown runs in reverse order, so it is the first
/// to hear of it and `STOPPING=1` goes out before the other services start draining.
public struct SystemdStatusService: Service, CustomStringConvertible {
    private let notifier: SystemdNotifier
    private let changes: AsyncStream<Void>
    private let untilReady: @Sendable () async throws -> Void
    private let describe: @Sendable () async -> String
    private let logger: Logger

    public var description: String { "SystemdStatusService" }

    /// A stream for `changes`: a burst of changes during one status line's computing is one more line.
    ///
    /// Not one line per change.
    public static func makeChangeStream() -> (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation) {
        AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// - Parameters:
    ///   - changes: yields whenever what `describe` reports may have changed (a device came or went, a
    ///     workout started or ended); see ``makeChangeStream()``.
    ///   - untilReady: returns once the daemon can serve (e.g. the udev monitor is armed and the first
    ///     scan is done); `READY=1` is sent only then.
    ///   - describe: the status line, e.g. "2 devices, 1 workout active"; computed at READY and after each
    ///     change, and sent only when it differs from the last one sent.
    public init(
        notifier: SystemdNotifier,
        changes: AsyncStream<Void>,
        logger: Logger,
        untilReady: @escaping @Sendable () async throws -> Void,
        describe: @escaping @Sendable () async -> String
    ) {
        self.notifier = notifier
        self.changes = changes
        self.logger = logger
        self.untilReady = untilReady
        self.describe = describe
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { [untilReady] in try await untilReady() }
        } catch is CancellationError {
            notifier.stopping(status: "stopping before start-up completed")
            return
        }
        guard !Task.isShuttingDownGracefully else {
            notifier.stopping(status: "stopping before start-up completed")
            return
        }

        guard notifier.isConnected else {
            // Nobody to tell: no status line is ever computed.
            logger.info("ready")
            try? await gracefulShutdown()
            logger.info("stopping")
            return
        }
        let initial = await describe()
        notifier.ready(status: initial)
        logger.info("ready", metadata: ["status": "\(initial)"])

        await cancelWhenGracefulShutdown { [changes, describe, notifier] in
            var current = initial
            for await _ in changes {
                let next = await describe()
                if next != current {
                    notifier.status(next)
                    current = next
                }
            }
        }
        notifier.stopping(status: "stopping: draining devices")
        logger.info("stopping")
    }
}
