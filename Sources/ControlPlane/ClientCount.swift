import Synchronization

/// How many control clients are connected, so the server can refuse one past its limit.
final class ClientCount: Sendable {
    private let value = Atomic<Int>(0)

    var current: Int { value.load(ordering: .relaxed) }

    /// Takes a slot if fewer than `limit` are taken.
    func admit(limit: Int) -> Bool {
        var current = value.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = value.compareExchange(
                expected: current,
                desired: current + 1,
                ordering: .relaxed
            )
            if exchanged { return true }
            current = original
        }
        return false
    }

    func leave() {
        value.subtract(1, ordering: .relaxed)
    }
}
