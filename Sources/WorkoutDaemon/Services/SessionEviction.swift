import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import WorkoutEngine

/// `limits.session_idle_timeout_s`: sessions of devices gone longer than the timeout leave memory.
///
/// Every so often ``WorkoutEngine/evictIdleSessions(idleFor:now:)`` runs; their state and reply window stay in the
/// store, so a device that comes back still gets its replays. `workoutd_sessions_in_memory` shows how many are held. A
/// reload changes the timeout from the next sweep on; 0 keeps every session.
final class SessionEviction: Service, Sendable, CustomStringConvertible {
    private let engine: WorkoutEngine
    private let timeout: Mutex<Duration>
    private let logger: Logger
    private let inMemory: Gauge

    var description: String { "SessionEviction" }

    init(engine: WorkoutEngine, timeout: Duration, logger: Logger, metrics: any MetricsFactory) {
        inMemory = Gauge(label: "workoutd_sessions_in_memory", factory: metrics)
        self.engine = engine
        self.timeout = Mutex(timeout)
        self.logger = logger
    }

    func update(timeout: Duration) {
        self.timeout.withLock { $0 = timeout }
    }

    /// A quarter of the timeout between sweeps, at least 10 ms and at most a minute.
    ///
    /// So a session leaves at most 1.25 timeouts after its last batch; a sweep is one pass over a small table under its
    /// lock.
    static func period(for timeout: Duration) -> Duration {
        guard timeout > .zero else { return .seconds(60) }
        return min(.seconds(60), max(.milliseconds(10), timeout / 4))
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                let timeout = self.timeout.withLock { $0 }
                try await Task.sleep(for: Self.period(for: timeout))
                let evicted = engine.evictIdleSessions(idleFor: timeout)
                let held = engine.sessionsInMemory
                inMemory.record(held)
                if evicted > 0 {
                    logger.debug(
                        "idle sessions left memory",
                        metadata: ["evicted": "\(evicted)", "in_memory": "\(held)"]
                    )
                }
            }
        }
    }
}
