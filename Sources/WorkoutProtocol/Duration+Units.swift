extension Duration {
    /// The duration in seconds, fractions included: for `TimeInterval`s and reports.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds, rounded down: for `poll(2)` timeouts and the like.
    public var inMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds, rounded down: for histograms that count nanoseconds.
    public var inNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
