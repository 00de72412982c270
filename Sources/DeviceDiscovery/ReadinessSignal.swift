import Synchronization

/// A one-shot "ready" (or "failed before getting ready") that any number of tasks can await.
final class ReadinessSignal: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Void, any Error>])
        case ready
        case failed(any Error)
    }

    private let state = Mutex(State.waiting([]))

    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            state.withLock { state in
                switch state {
                case .waiting(let waiters): state = .waiting(waiters + [continuation])
                case .ready: continuation.resume()
                case .failed(let error): continuation.resume(throwing: error)
                }
            }
        }
    }

    func signal() { settle(.ready) }

    func fail(_ error: any Error) { settle(.failed(error)) }

    private func settle(_ outcome: State) {
        let waiters: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            guard case .waiting(let waiters) = state else { return [] }
            state = outcome
            return waiters
        }
        for waiter in waiters {
            switch outcome {
            case .failed(let error): waiter.resume(throwing: error)
            default: waiter.resume()
            }
        }
    }
}
