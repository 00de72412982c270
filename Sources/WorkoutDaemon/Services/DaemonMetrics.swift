import Metrics
import Prometheus

/// The daemon's metrics backend.
///
/// swift-metrics recorded into a Prometheus registry, which the control socket's `metrics` method renders. The daemon
/// that owns the process installs it as the process's backend; one embedded in a test process keeps its own, so
/// daemons side by side count apart.
struct DaemonMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: any MetricsFactory

    /// Batches take microseconds in memory and milliseconds with fsync: buckets cover both.
    static let handlerLatencyBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
    ]

    /// How long device batches take on their session, from its start to its replies (`ContinuousClock`).
    func handlerLatency() -> Metrics.Timer {
        Metrics.Timer(label: "workoutd_handler_duration_seconds", factory: factory)
    }

    /// `processWide`: installs the backend as the process's; must then run before any metric is created.
    init(processWide: Bool) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["workoutd_handler_duration_seconds"] = Self.handlerLatencyBuckets
        if processWide { MetricsSystem.bootstrap(factory) }
        self.factory = factory
    }
}
