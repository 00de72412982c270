import Synchronization

/// Logged-in browsers: random session ids that expire. Kept in memory only, so a restart logs everyone out.
final class WebSessions: Sendable {
    /// A live session a request carried: its id, and when it ends (its event streams end then too).
    struct Admission: Sendable, Hashable {
        var id: String
        var expiry: ContinuousClock.Instant
    }

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

    /// A new session id, valid for the lifetime, and the ids of the sessions it pushed out.
    ///
    /// The id is 256 random bits from the system's CSPRNG, in hex. The sessions pushed out are the oldest, beyond the
    /// capacity; the caller must end them (and their event streams).
    func create(now: ContinuousClock.Instant = .now) -> (id: String, evicted: [String]) {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<4).map { _ in
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        let evicted = state.withLock { state -> [String] in
            state.expiries = state.expiries.filter { $0.value > now }
            var evicted: [String] = []
            if state.expiries.count >= capacity, let oldest = state.expiries.min(by: { $0.value < $1.value })?.key {
                state.expiries[oldest] = nil
                evicted.append(oldest)
            }
            state.expiries[id] = now + lifetime
            return evicted
        }
        return (id, evicted)
    }

    /// The session `id` names, if it has not expired (an expired one is forgotten).
    func admission(_ id: String, now: ContinuousClock.Instant = .now) -> Admission? {
        state.withLock { state in
            // Looked up by every id held, compared in constant time, so a guess learns nothing from timing.
            let candidate = Array(id.utf8)
            var found: String?
            for key in state.expiries.keys where ConstantTime.equal(Array(key.utf8), candidate) { found = key }
            guard let found, let expiry = state.expiries[found] else { return nil }
            guard expiry > now else {
                state.expiries[found] = nil
                return nil
            }
            return Admission(id: found, expiry: expiry)
        }
    }

    /// Whether `id` names a session that has not expired.
    func isValid(_ id: String, now: ContinuousClock.Instant = .now) -> Bool {
        admission(id, now: now) != nil
    }

    func end(_ id: String) {
        _ = state.withLock { $0.expiries.removeValue(forKey: id) }
    }

    var lifetimeSeconds: Int { Int(lifetime.components.seconds) }
}
