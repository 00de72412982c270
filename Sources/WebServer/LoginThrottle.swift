/// Failed logins per client address.
///
/// After `attempts` failures a client waits `lockout` before it may try again (answered 429 meanwhile), so a token
/// cannot be guessed at network speed. A plain state machine: the caller passes the time, tests pass their own.
struct LoginThrottle: Sendable {
    enum Decision: Equatable {
        case allowed
        /// Try again after this long.
        case refused(retryAfter: Duration)
    }

    private struct Client {
        var failures = 0
        var lockedUntil: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant
    }

    private let attempts: Int
    private let lockout: Duration
    /// Addresses remembered at most.
    ///
    /// The longest quiet is forgotten first, so a spray of addresses costs bounded memory.
    private let capacity: Int
    private var clients: [String: Client] = [:]

    init(attempts: Int, lockout: Duration, capacity: Int = 1024) {
        self.attempts = max(1, attempts)
        self.lockout = lockout
        self.capacity = max(1, capacity)
    }

    /// Whether `client` may try a login now.
    func check(_ client: String, now: ContinuousClock.Instant) -> Decision {
        guard let until = clients[client]?.lockedUntil, until > now else { return .allowed }
        return .refused(retryAfter: until - now)
    }

    /// A wrong token: the `attempts`-th failure in a row locks the client out.
    mutating func recordFailure(_ client: String, now: ContinuousClock.Instant) {
        var entry = clients[client] ?? Client(lastFailure: now)
        if let until = entry.lockedUntil, until <= now {
            entry = Client(lastFailure: now)
        }
        entry.failures += 1
        entry.lastFailure = now
        if entry.failures >= attempts { entry.lockedUntil = now + lockout }
        if clients[client] == nil, clients.count >= capacity,
            let quietest = clients.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key
        {
            clients[quietest] = nil
        }
        clients[client] = entry
    }

    /// A right token clears the client's failures.
    mutating func recordSuccess(_ client: String) {
        clients[client] = nil
    }
}
