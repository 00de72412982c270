/// Exponential backoff with a cap: `initial`, then doubling per failed attempt, never above `maximum`.
public struct RetryBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration = .seconds(2), maximum: Duration = .seconds(600)) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// The wait after the `attempts`-th failed attempt (1 for the first failure).
    public func delay(afterAttempts attempts: Int) -> Duration {
        var delay = initial
        var remaining = max(0, attempts - 1)
        while remaining > 0, delay < maximum {
            delay *= 2
            remaining -= 1
        }
        return min(delay, maximum)
    }
}
