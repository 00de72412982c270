import Synchronization

/// Logged-in browsers: random session ids that expire. Kept in memory only, so a restart logs everyone out.
final class WebSessions: Sendable {
    private struct State {
        var expiries: [String: ContinuousClock.Instant] = [:]
    }

    private let lifetime: Duration
    private let capacity: Int
    private let state = Mutex(State())

    init(lifetime: Duration, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
    }

    /// A new session id (256 random bits from the system's CSPRNG, hex), valid for the lifetime.
    func create(now: ContinuousClock.Instant = .now) -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        state.withLock { state in
            state.expiries = state.expiries.filter { $0.value > now }
            if state.expiries.count >= capacity, let oldest = state.expiries.min(by: { $0.value < $1.value })?.key {
                state.expiries[oldest] = nil
            }
            state.expiries[id] = now + lifetime
        }
        return id
    }

    /// Whether `id` names a session that has not expired (an expired one is forgotten).
    func isValid(_ id: String, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            // Looked up by every id held, compared in constant time, so a guess learns nothing from timing.
            let candidate = Array(id.utf8)
            var found: String?
            for key in state.expiries.keys where ConstantTime.equal(Array(key.utf8), candidate) { found = key }
            guard let found, let expiry = state.expiries[found] else { return false }
            guard expiry > now else {
                state.expiries[found] = nil
                return false
            }
            return true
        }
    }

    func end(_ id: String) {
        _ = state.withLock { $0.expiries.removeValue(forKey: id) }
    }

    var lifetimeSeconds: Int { Int(lifetime.components.seconds) }
}
