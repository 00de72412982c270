import Synchronization

/// When each measured workout was acknowledged on its hub, and when it was first seen centrally.
final class LagBook: Sendable {
    private struct State {
        var acknowledged: [WorkoutKey: ContinuousClock.Instant] = [:]
        var seen: [WorkoutKey: ContinuousClock.Instant] = [:]
        var refused = 0
    }
    private let state = Mutex(State())

    func acknowledged(_ key: WorkoutKey, at instant: ContinuousClock.Instant) {
        state.withLock { $0.acknowledged[key] = instant }
    }

    func refused() {
        state.withLock { $0.refused += 1 }
    }

    /// Only the first sighting counts.
    func seen(_ keys: [WorkoutKey], at instant: ContinuousClock.Instant) {
        state.withLock { state in
            for key in keys where state.seen[key] == nil { state.seen[key] = instant }
        }
    }

    var unseen: [WorkoutKey] {
        state.withLock { state in state.acknowledged.keys.filter { state.seen[$0] == nil } }
    }

    var acknowledgedCount: Int { state.withLock { $0.acknowledged.count } }
    var refusedCount: Int { state.withLock { $0.refused } }

    /// The first sighting of a workout acknowledged at or after `instant`, if any.
    ///
    /// After a failover such a workout can only have reached the promoted server: the first one seen is the resumption.
    func firstSighting(ofAcknowledgedAfter instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        state.withLock { state in
            state.acknowledged.filter { $0.value >= instant }.compactMap { state.seen[$0.key] }.min()
        }
    }

    /// Seen minus acknowledged, in milliseconds, sorted.
    ///
    /// A row seen before its acknowledgement was stamped counts 0.
    var lagsInMilliseconds: [Double] {
        state.withLock { state in
            state.acknowledged.compactMap { key, acknowledged in
                state.seen[key].map { max(0, acknowledged.duration(to: $0).milliseconds) }
            }
        }
        .sorted()
    }

    /// Each hub's own worst lag, sorted: the per-hub view of the same sightings.
    var worstLagPerHubInMilliseconds: [Double] {
        state.withLock { state in
            var worst: [String: Double] = [:]
            for (key, acknowledged) in state.acknowledged {
                guard let seen = state.seen[key] else { continue }
                worst[key.hubID] = max(worst[key.hubID] ?? 0, max(0, acknowledged.duration(to: seen).milliseconds))
            }
            return worst.values.sorted()
        }
    }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

/// The value at `fraction` of sorted `values` (nearest rank), 0 when empty.
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    return values[min(values.count - 1, max(0, Int((Double(values.count) * fraction).rounded(.up)) - 1))]
}
