import Metrics
import Prometheus

/// The process-wide metrics backend.
///
/// swift-metrics recorded into a Prometheus registry, which the control socket's `metrics` method renders.
enum DaemonMetrics {
    /// Batches take microseconds in memory and milliseconds with fsync: buckets cover both.
    static let handlerLatencyBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
    ]

    /// How long device batches take on their session, from its start to its replies (`ContinuousClock`).
    static func handlerLatency() -> Metrics.Timer {
        Metrics.Timer(label: "workoutd_handler_duration_seconds")
    }

    /// Installs the backend; must run before any metric is created (they bind to the backend at creation).
    static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["workoutd_handler_duration_seconds"] = handlerLatencyBuckets
        MetricsSystem.bootstrap(factory)
        return registry
    }
}
