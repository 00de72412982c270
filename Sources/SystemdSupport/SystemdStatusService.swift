import Logging
import ServiceLifecycle

/// Reports the daemon's life to systemd: `READY=1` once start-up is really done, a `STATUS=` line
/// kept current while it runs, and `STOPPING=1` as soon as graceful shutdown begins.
///
/// Put it last in the `ServiceGroup`: graceful shutdown runs in reverse order, so it is the first
/// to hear of it and `STOPPING=1` goes out before the other services start draining.
public struct SystemdStatusService: Service, CustomStringConvertible {
    private let notifier: SystemdNotifier
    private let refreshInterval: Duration
    private let untilReady: @Sendable () async throws -> Void
    private let describe: @Sendable () async -> String
    private let logger: Logger

    public var description: String { "SystemdStatusService" }

    /// - Parameters:
    ///   - untilReady: returns once the daemon can serve (e.g. the udev monitor is armed and the first
    ///     scan is done); `READY=1` is sent only then.
    ///   - describe: the status line, e.g. "2 devices, 1 workout active"; polled every `refreshInterval`
    ///     and sent only when it changes.
    public init(
        notifier: SystemdNotifier,
        refreshInterval: Duration = .seconds(1),
        logger: Logger,
        untilReady: @escaping @Sendable () async throws -> Void,
        describe: @escaping @Sendable () async -> String
    ) {
        self.notifier = notifier
        self.refreshInterval = refreshInterval
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

        let initial = await describe()
        notifier.ready(status: initial)
        logger.info("ready", metadata: ["status": "\(initial)"])

        do {
            try await cancelWhenGracefulShutdown { [describe, notifier, refreshInterval] in
                var current = initial
                while true {
                    try await Task.sleep(for: refreshInterval)
                    let next = await describe()
                    if next != current {
                        notifier.status(next)
                        current = next
                    }
                }
            }
        } catch is CancellationError {
            // Graceful shutdown (or cancellation) ended the refresh loop.
        }
        notifier.stopping(status: "stopping: draining devices")
        logger.info("stopping")
    }
}
