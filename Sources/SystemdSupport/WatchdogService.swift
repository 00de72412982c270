import Logging
import NIOCore
import ServiceLifecycle

/// Pings systemd's watchdog (`WATCHDOG=1`) only while every NIO event loop and the Swift task pool
/// still run work: each round submits a no-op to every loop and pings only when all have run it.
/// A hung loop therefore stops the pings and systemd restarts the service after `WatchdogSec=`.
///
/// Put it first in the `ServiceGroup`: graceful shutdown runs in reverse order, so it keeps pinging
/// while the other services drain.
public struct WatchdogService: Service, CustomStringConvertible {
    private let notifier: SystemdNotifier
    private let eventLoops: [any EventLoop]
    private let logger: Logger

    public var description: String { "WatchdogService" }

    public init(notifier: SystemdNotifier, eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.notifier = notifier
        self.eventLoops = Array(eventLoopGroup.makeIterator())
        self.logger = logger
    }

    public func run() async throws {
        guard let interval = notifier.watchdogInterval else {
            // No watchdog configured: stay in the group until shutdown (returning would end the group).
            try? await gracefulShutdown()
            return
        }
        // sd_watchdog_enabled(3) recommends pinging at half the interval.
        let period = interval / 2
        logger.debug("watchdog enabled", metadata: ["interval": "\(interval)", "loops": "\(eventLoops.count)"])
        do {
            try await cancelWhenGracefulShutdown { [eventLoops, notifier, logger] in
                while true {
                    let started = ContinuousClock.now
                    for loop in eventLoops {
                        try await loop.submit {}.get()
                    }
                    notifier.watchdogPing()
                    let roundTrip = ContinuousClock.now - started
                    if roundTrip > period {
                        logger.warning("event loops were unresponsive", metadata: ["for": "\(roundTrip)"])
                    }
                    try await Task.sleep(for: period)
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
