import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Pings systemd's watchdog (`WATCHDOG=1`) only while every event loop and the task pool run work.
///
/// Each round passes from NIO event loop to loop and ends on the Swift task pool, which pings only when the whole chain
/// has run. A hung loop or pool therefore stops the pings and systemd restarts the service after `WatchdogSec=`.
///
/// A round costs one wake-up per loop and one for the pool, and nothing between rounds: the round
/// timer is a scheduled task on the first loop, armed by the loop itself (no hop to arm it), at half
/// of `WatchdogSec=` as `sd_watchdog_enabled(3)` recommends.
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
        guard let interval = notifier.watchdogInterval, let first = eventLoops.first else {
            // No watchdog configured: stay in the group until shutdown (returning would end the group).
            try? await gracefulShutdown()
            return
        }
        let period = interval / 2
        logger.debug("watchdog enabled", metadata: ["interval": "\(interval)", "loops": "\(eventLoops.count)"])
        let rounds = WatchdogRounds(
            loops: eventLoops,
            period: TimeAmount(period),
            notifier: notifier,
            logger: logger
        )
        first.execute { rounds.startRound() }
        try? await gracefulShutdown()
        first.execute { rounds.stop() }
    }
}

/// The rounds of one running ``WatchdogService``; everything but the final ping runs on the loops.
private final class WatchdogRounds: Sendable {
    private struct State {
        var inFlightSince: NIODeadline?
        var next: Scheduled<Void>?
        var stopped = false
        var reportedUnresponsive = false
    }

    private let loops: [any EventLoop]
    private let period: TimeAmount
    private let notifier: SystemdNotifier
    private let logger: Logger
    private let state = Mutex(State())

    init(loops: [any EventLoop], period: TimeAmount, notifier: SystemdNotifier, logger: Logger) {
        self.loops = loops
        self.period = period
        self.notifier = notifier
        self.logger = logger
    }

    /// On the first loop: arms the next round's timer, then starts this round's chain.
    ///
    /// Unless the last chain is still stuck somewhere: then no ping goes out until it completes.
    func startRound() {
        enum Start {
            case stopped, begin
            case stuck(TimeAmount)
        }
        let now = NIODeadline.now()
        let start = state.withLock { state -> Start in
            guard !state.stopped else { return .stopped }
            state.next = loops[0].scheduleTask(deadline: now + period) { self.startRound() }
            if let since = state.inFlightSince { return .stuck(now - since) }
            state.inFlightSince = now
            return .begin
        }
        switch start {
        case .stopped:
            return
        case .begin:
            pass(from: 1, started: now)
        case .stuck(let duration):
            let first = state.withLock { state in
                defer { state.reportedUnresponsive = true }
                return !state.reportedUnresponsive
            }
            if first {
                logger.warning(
                    "event loops are unresponsive; watchdog pings held back",
                    metadata: ["for": "\(duration)"]
                )
            }
        }
    }

    /// Runs on loop `index - 1`; hands the round to loop `index`, or to the task pool after the last loop.
    private func pass(from index: Int, started: NIODeadline) {
        guard index < loops.count else {
            Task { self.finish(started: started) }
            return
        }
        loops[index].execute { self.pass(from: index + 1, started: started) }
    }

    /// On the task pool: the whole chain ran, so every loop and the pool are alive.
    private func finish(started: NIODeadline) {
        let wasHeldBack = state.withLock { state -> Bool? in
            guard !state.stopped else { return nil }
            state.inFlightSince = nil
            defer { state.reportedUnresponsive = false }
            return state.reportedUnresponsive
        }
        guard let wasHeldBack else { return }
        notifier.watchdogPing()
        let roundTrip = NIODeadline.now() - started
        if wasHeldBack || roundTrip > period {
            logger.warning("event loops were unresponsive", metadata: ["for": "\(roundTrip)"])
        }
    }

    /// On the first loop: no more rounds.
    func stop() {
        let next = state.withLock { state -> Scheduled<Void>? in
            state.stopped = true
            defer { state.next = nil }
            return state.next
        }
        next?.cancel()
    }
}
