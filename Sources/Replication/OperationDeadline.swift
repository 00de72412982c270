import Synchronization

struct ReplicationTimeoutError: Error, CustomStringConvertible {
    var timeout: Duration
    var description: String { "no answer from the server within \(timeout)" }
}

/// Runs `operation`, failing with ``ReplicationTimeoutError`` after `timeout` WITHOUT waiting for the
/// operation to finish.
///
/// Why not a task group: a group waits for every child before it returns, and postgres-nio 1.33 has
/// awaits that ignore cancellation. Its query writes the request with no write promise, so a query sent
/// after the channel's pipeline was torn down (the server died a moment earlier) is never answered. A
/// group deadline would wait for that child for ever and hold the backlog with it; this one gives up on
/// it (the caller then closes the connection, which ends whatever can still end). `lateResult` gets a
/// value the operation produced after the caller stopped waiting (a connection to close).
func withOperationDeadline<T: Sendable>(
    _ timeout: Duration, lateResult: @escaping @Sendable (T) -> Void = { _ in },
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.install(continuation)
            let work = Task {
                do {
                    let value = try await operation()
                    if !race.finish(.success(value)) { lateResult(value) }
                } catch {
                    race.finish(.failure(error))
                }
            }
            let timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                race.finish(.failure(ReplicationTimeoutError(timeout: timeout)))
            }
            race.track(work, timer)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of operation, timer and cancellation to finish resumes the caller, exactly once; the
/// others are cancelled.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            guard let result = state.result else {
                state.continuation = continuation
                return nil
            }
            return result
        }
        if let early { continuation.resume(with: early) }
    }

    func track(_ tasks: Task<Void, Never>...) {
        let finished = state.withLock { state in
            if state.result == nil { state.tasks += tasks }
            return state.result != nil
        }
        if finished { tasks.forEach { $0.cancel() } }
    }

    /// Whether `result` is the one the caller gets.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let winner = state.withLock { state -> (continuation: CheckedContinuation<T, any Error>?, tasks: [Task<Void, Never>])? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil; state.tasks = [] }
            return (state.continuation, state.tasks)
        }
        guard let winner else { return false }
        winner.tasks.forEach { $0.cancel() }
        winner.continuation?.resume(with: result)
        return true
    }
}
