/// A device's command budget: `rate` tokens a second refill it up to `burst`, each command takes one.
///
/// A plain value with the time passed in (monotonic, `ContinuousClock`), so the state machine is tested
/// without a clock or I/O. The session updates it once per batch (``take(_:at:rate:burst:)``): a batch's
/// first lines are admitted while tokens last, the rest are answered `rate_limited` and run nothing.
/// Every line costs a token, a replayed retry and a malformed line too: each is work the hub does for the
/// device, and a flood of cheap replays is still a flood.
public struct TokenBucket: Sendable, Hashable {
    /// What one batch may run: its first `admitted` lines; the rest wait `retryAfterMilliseconds`.
    public struct Admission: Sendable, Hashable {
        public var admitted: Int
        /// Until at least one token is back (0 when every line was admitted).
        public var retryAfterMilliseconds: Int64

        public init(admitted: Int, retryAfterMilliseconds: Int64 = 0) {
            self.admitted = admitted
            self.retryAfterMilliseconds = retryAfterMilliseconds
        }
    }

    /// Tokens left; fractional, so a rate below one batch a second still refills exactly.
    public private(set) var tokens: Double
    /// When the tokens were last counted; `nil` before the first batch (the bucket starts full).
    private var counted: ContinuousClock.Instant?

    public init() {
        tokens = 0
    }

    /// Takes one token per line of a `count`-line batch arriving `now`. `rate` 0 turns the limit off (every
    /// line admitted, nothing counted); a `burst` below 1 counts as 1. A new rate or burst (a reload) applies
    /// from this call on: the tokens are capped at the new burst.
    public mutating func take(_ count: Int, at now: ContinuousClock.Instant, rate: Int, burst: Int) -> Admission {
        guard rate > 0 else { return Admission(admitted: count) }
        let capacity = Double(max(burst, 1))
        if let counted {
            // A clock never runs backwards; should it, no tokens are made rather than a negative refill.
            let elapsed = now > counted ? now - counted : .zero
            let (seconds, attoseconds) = elapsed.components
            tokens = min(capacity, tokens + (Double(seconds) + Double(attoseconds) * 1e-18) * Double(rate))
        } else {
            tokens = capacity
        }
        counted = now
        let admitted = min(count, Int(tokens))
        tokens -= Double(admitted)
        guard admitted < count else { return Admission(admitted: count) }
        // Until one whole token is back, rounded up and at least 1 ms: retrying then is admitted.
        let wait = ((1 - tokens) / Double(rate) * 1000).rounded(.up)
        return Admission(admitted: admitted, retryAfterMilliseconds: max(1, Int64(wait)))
    }
}
