import Synchronization

/// A result produced once and awaited by any number of tasks.
///
/// The daemon's one box for handing a continuation its outcome from another thread (a child's exit, discovery's
/// readiness, a deadline race).
///
/// The first ``finish(_:)`` wins and later ones are ignored; a task that waits after the result is in gets
/// it at once. Continuations are resumed outside the lock.
public final class OneShot<Value: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Value, any Error>])
        case finished(Result<Value, any Error>)
    }

    private let state = Mutex(State.waiting([]))

    public init() {}

    /// Whether `result` is the one the waiters get (false when another finished first).
    @discardableResult
    public func finish(_ result: Result<Value, any Error>) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>]? in
            guard case .waiting(let waiters) = state else { return nil }
            state = .finished(result)
            return waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(with: result) }
        return true
    }

    /// The result, once there is one.
    public func value() async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let ready = state.withLock { state -> Result<Value, any Error>? in
                switch state {
                case .waiting(let waiters):
                    state = .waiting(waiters + [continuation])
                    return nil
                case .finished(let result):
                    return result
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
