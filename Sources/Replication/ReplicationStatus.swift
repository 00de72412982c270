import Foundation
import Logging
import Metrics
import Synchronization

/// How shipping stands right now, for `workoutctl status` and the metrics.
///
/// Logs each change of reason once.
public final class ReplicationStatus: Sendable {
    public enum State: String, Sendable {
        case connected
        case disconnected
    }

    public struct Snapshot: Sendable {
        public var state: State
        public var since: Date
        public var lastError: String?
        public var lastShippedAt: Date?
        public var hubID: String
        public var server: String
        /// `verified`, `unverified` or `local` (``ReplicationConfiguration/ServerIdentity``).
        public var serverIdentity: String
        /// Connections open now (leased, idle or being opened), and the most the pool opens.
        public var connections = 0
        public var maxConnections: Int
        /// The host the connections go to now (`host:port`, or a socket's path).
        ///
        /// With several hosts in `replication.postgres_url`, the one that accepted writes. Nil while disconnected.
        public var centralHost: String?
    }

    private let snapshot: Mutex<Snapshot>
    /// The newest failure since start and when it happened.
    ///
    /// Unlike ``Snapshot/lastError``, kept once connected again. The heartbeat reports it: it is written only while connected, when the snapshot's error is gone.
    private let newestFailure = Mutex<(reason: String, at: Date)?>(nil)
    private let logger: Logger
    private let connectedGauge: Gauge
    private let pendingGauge: Gauge
    private let lastShippedGauge: Gauge
    private let shippedCounter: Counter
    private let failureCounter: Counter
    private let connectionsGauge: Gauge

    init(
        hubID: String,
        server: String,
        serverIdentity: String,
        maxConnections: Int,
        logger: Logger,
        metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        connectedGauge = Gauge(label: "workoutd_replication_connected", factory: metrics)
        pendingGauge = Gauge(label: "workoutd_replication_pending", factory: metrics)
        lastShippedGauge = Gauge(label: "workoutd_replication_last_shipped_timestamp_seconds", factory: metrics)
        shippedCounter = Counter(label: "workoutd_replication_shipped_changes_total", factory: metrics)
        failureCounter = Counter(label: "workoutd_replication_failures_total", factory: metrics)
        connectionsGauge = Gauge(label: "workoutd_replication_connections", factory: metrics)
        snapshot = Mutex(
            Snapshot(
                state: .disconnected,
                since: Date(),
                hubID: hubID,
                server: server,
                serverIdentity: serverIdentity,
                maxConnections: maxConnections
            )
        )
        self.logger = logger
        connectedGauge.record(0)
    }

    public var current: Snapshot { snapshot.withLock { $0 } }

    /// A batch went through, or, with `host`, a connection to that host was opened.
    func connected(to host: String? = nil) {
        let (changed, hostChanged) = snapshot.withLock { snapshot in
            let hostChanged = host != nil && snapshot.centralHost != host
            if let host { snapshot.centralHost = host }
            guard snapshot.state != .connected else { return (false, hostChanged) }
            snapshot.state = .connected
            snapshot.since = Date()
            snapshot.lastError = nil
            return (true, hostChanged)
        }
        let now = current
        if hostChanged, !changed {
            logger.info("replication host changed", metadata: ["host": "\(now.centralHost ?? "")"])
        }
        guard changed else { return }
        connectedGauge.record(1)
        logger.info(
            "replication connected",
            metadata: ["server": "\(now.server)", "host": "\(now.centralHost ?? "")", "hub_id": "\(now.hubID)"]
        )
    }

    /// A failed attempt: logged when the reason differs from the last one, not on every retry.
    func failed(_ reason: String, retryIn delay: Duration) {
        failureCounter.increment()
        newestFailure.withLock { $0 = (reason, Date()) }
        let changed = snapshot.withLock { snapshot in
            let changed = snapshot.lastError != reason
            if snapshot.state != .disconnected {
                snapshot.state = .disconnected
                snapshot.since = Date()
            }
            snapshot.centralHost = nil
            snapshot.lastError = reason
            return changed
        }
        connectedGauge.record(0)
        guard changed else { return }
        logger.warning(
            "replication disconnected; changes wait in the local store",
            metadata: [
                "server": "\(current.server)", "error": "\(reason)", "retry_in": "\(delay)",
            ]
        )
    }

    var latestFailure: (reason: String, at: Date)? { newestFailure.withLock { $0 } }

    func shipped(_ count: Int, at date: Date) {
        snapshot.withLock { $0.lastShippedAt = date }
        shippedCounter.increment(by: Int64(count))
        lastShippedGauge.record(date.timeIntervalSince1970)
    }

    func connectionsOpen(_ count: Int) {
        snapshot.withLock { $0.connections = count }
        connectionsGauge.record(count)
    }

    func pending(_ count: Int) {
        pendingGauge.record(count)
    }
}
