import Testing
import WorkoutEngine

/// The per-device token bucket as a plain value: time is passed in, nothing waits.
@Suite("Token bucket")
struct TokenBucketTests {
    let start = ContinuousClock.now

    @Test("a full bucket admits the burst, then the rest of the batch waits for one token")
    func burstThenLimited() {
        var bucket = TokenBucket()
        let first = bucket.take(1_200, at: start, rate: 100, burst: 1_000)
        #expect(first.admitted == 1_000)
        // One token at 100/s is 10 ms away.
        #expect(first.retryAfterMilliseconds == 10)
        let next = bucket.take(1, at: start, rate: 100, burst: 1_000)
        #expect(next == TokenBucket.Admission(admitted: 0, retryAfterMilliseconds: 10))
    }

    @Test("tokens come back at the rate, fractions included, and never beyond the burst")
    func refill() {
        var bucket = TokenBucket()
        #expect(bucket.take(5, at: start, rate: 10, burst: 5).admitted == 5)
        // 250 ms at 10/s: 2.5 tokens, so two commands and half a token left.
        #expect(
            bucket.take(3, at: start + .milliseconds(250), rate: 10, burst: 5)
                == .init(admitted: 2, retryAfterMilliseconds: 50)
        )
        #expect(bucket.take(1, at: start + .milliseconds(300), rate: 10, burst: 5).admitted == 1)
        // An hour later the bucket holds the burst, not 36,000 tokens.
        #expect(bucket.take(100, at: start + .seconds(3_600), rate: 10, burst: 5).admitted == 5)
    }

    @Test("rate 0 turns the limit off")
    func off() {
        var bucket = TokenBucket()
        #expect(bucket.take(1_000_000, at: start, rate: 0, burst: 1) == .init(admitted: 1_000_000))
        #expect(bucket.take(1_000_000, at: start, rate: 0, burst: 1) == .init(admitted: 1_000_000))
    }

    @Test("a lower burst from a reload caps the tokens left; a clock that steps back makes none")
    func reloadAndClock() {
        var bucket = TokenBucket()
        #expect(bucket.take(10, at: start + .seconds(1), rate: 100, burst: 1_000).admitted == 10)
        #expect(bucket.take(50, at: start + .seconds(1), rate: 100, burst: 20).admitted == 20)
        #expect(bucket.take(1, at: start, rate: 100, burst: 20).admitted == 0)
    }
}
