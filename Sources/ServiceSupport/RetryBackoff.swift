/// Exponential backoff with a cap: `initial`, then doubling per failed attempt, never above `maximum`.
///
/// The one backoff of the daemon: a device's reopen attempts (``ReconnectPolicy``) and share deliveries use it.
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
        // At most 32 doublings: past them any delay a person configures has long reached its cap.
        for _ in 0..<min(max(0, attempts - 1), 32) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}
