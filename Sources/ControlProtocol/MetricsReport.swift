/// The `metrics` result: the Prometheus text exposition (format 0.0.4), as a scraper would see it.
public struct MetricsReport: Codable, Hashable, Sendable {
    public var text: String
    public init(text: String) { self.text = text }
}
