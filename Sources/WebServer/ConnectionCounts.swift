import Synchronization

/// Connections open per client address, so one address cannot take every connection the server allows.
final class ConnectionCounts: Sendable {
    private let limit: Int
    private let counts = Mutex<[ClientAddress: Int]>([:])

    init(limitPerAddress: Int) {
        limit = max(1, limitPerAddress)
    }

    /// Counts a new connection of `client`; false (and not counted) when it already holds `limit`.
    func admit(_ client: ClientAddress) -> Bool {
        counts.withLock { counts in
            let held = counts[client] ?? 0
            guard held < limit else { return false }
            counts[client] = held + 1
            return true
        }
    }

    func release(_ client: ClientAddress) {
        counts.withLock { counts in
            guard let held = counts[client] else { return }
            counts[client] = held > 1 ? held - 1 : nil
        }
    }
}
