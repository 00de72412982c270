/// Wrong tokens, per client address and across all of them.
///
/// After `attempts` failures in a row a client waits `lockout` (answered 429 meanwhile), and after `globalAttempts`
/// failures from anyone within `lockout` every client waits, so a token cannot be guessed at network speed from one
/// address or from many. A plain state machine: the caller passes the time, tests pass their own.
///
/// Each attempt is judged whole, under the caller's lock: whether it may be tried, whether it was right, and the
/// failure it adds. Guesses sent in parallel therefore count one by one, and a locked-out client gets 429 even
/// for the right token.
struct LoginThrottle: Sendable {
    enum Verdict: Equatable {
        /// The token was right; the client's failures are forgotten.
        case admitted
        /// The token was wrong, and counted.
        case wrong
        /// Not judged: try again after this long.
        case refused(retryAfter: Duration)
    }

    private struct Client {
        var failures = 0
        var lockedUntil: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant
    }

    private let attempts: Int
    private let lockout: Duration
    /// Addresses remembered at most, so a spray of addresses costs bounded memory. When full, the longest-quiet
    /// client that is not locked out is forgotten first; a lockout is never forgotten before it ends (a new
    /// address then waits), so churning through addresses cannot lift one.
    private let capacity: Int
    private let globalAttempts: Int
    private var clients: [ClientAddress: Client] = [:]
    /// When the most recent failures (of any client) happened, oldest first: at most `globalAttempts`.
    private var recentFailures: [ContinuousClock.Instant] = []

    init(attempts: Int, lockout: Duration, globalAttempts: Int = 50, capacity: Int = 1024) {
        self.attempts = max(1, attempts)
        self.lockout = lockout
        self.globalAttempts = max(1, globalAttempts)
        self.capacity = max(1, capacity)
    }

    /// Judges one attempt by `client` whose token was `correct` (compared by the caller, in constant time).
    mutating func judge(_ client: ClientAddress, correct: Bool, now: ContinuousClock.Instant) -> Verdict {
        if let until = clients[client]?.lockedUntil, until > now { return .refused(retryAfter: until - now) }
        recentFailures.removeAll { now - $0 >= lockout }
        if recentFailures.count >= globalAttempts, let oldest = recentFailures.first {
            return .refused(retryAfter: oldest + lockout - now)
        }
        if clients[client] == nil, clients.count >= capacity {
            guard makeRoom(now: now) else {
                let firstFree = clients.values.compactMap(\.lockedUntil).min() ?? now + lockout
                return .refused(retryAfter: max(.seconds(1), firstFree - now))
            }
        }
        guard !correct else {
            clients[client] = nil
            return .admitted
        }
        var entry = clients[client] ?? Client(lastFailure: now)
        if let until = entry.lockedUntil, until <= now { entry = Client(lastFailure: now) }
        entry.failures += 1
        entry.lastFailure = now
        if entry.failures >= attempts { entry.lockedUntil = now + lockout }
        clients[client] = entry
        recentFailures.append(now)
        return .wrong
    }

    /// Forgets the longest-quiet client that is not locked out; false when every one is.
    private mutating func makeRoom(now: ContinuousClock.Instant) -> Bool {
        let free = clients.filter { ($0.value.lockedUntil ?? now) <= now }
        guard let quietest = free.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key else { return false }
        clients[quietest] = nil
        return true
    }
}
