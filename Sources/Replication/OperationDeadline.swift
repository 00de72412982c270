import Synchronization
import WorkoutEngine

struct ReplicationTimeoutError: Error, CustomStringConvertible {
    var timeout: Duration
    /// What was waited for ("connecting", "the commit", …), so the status says where it stuck.
    var operation: String?
    var description: String { "no answer from the server within \(timeout)" + (operation.map { " (\($0))" } ?? "") }
}

/// Runs `operation`, failing with ``ReplicationTimeoutError`` after `timeout`.
///
/// It fails WITHOUT waiting for the operation to finish.
///
/// Why not a task group: a group waits for every child before it returns, and postgres-nio 1.33 has
/// awaits that ignore cancellation. Its query writes the request with no write promise, so a query sent
/// after the channel's pipeline was torn down (the server died a moment earlier) is never answered. A
/// group deadline would wait for that child for ever and hold the backlog with it; this one gives up on
/// it (the caller then closes the connection, which ends whatever can still end). `lateResult` gets a
/// value the operation produced after the caller stopped waiting (a connection to close).
func withOperationDeadline<T: Sendable>(
    _ timeout: Duration,
    waitingFor what: String? = nil,
    lateResult: @escaping @Sendable (T) -> Void = { _ in },
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
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
            race.finish(.failure(ReplicationTimeoutError(timeout: timeout, operation: what)))
        }
        race.track(work, timer)
        return try await race.outcome.value()
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of operation, timer and cancellation to finish resumes the caller, exactly once.
///
/// The others are cancelled.
private final class DeadlineRace<T: Sendable>: Sendable {
    let outcome = OneShot<T>()
    /// The operation and the timer while the race runs; nil once it is decided.
    private let running = Mutex<[Task<Void, Never>]?>([])

    func track(_ tasks: Task<Void, Never>...) {
        let decided = running.withLock { running -> Bool in
            guard let current = running else { return true }
            running = current + tasks
            return false
        }
        if decided { for task in tasks { task.cancel() } }
    }

    /// Whether `result` is the one the caller gets.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        guard outcome.finish(result) else { return false }
        let losers = running.withLock { running -> [Task<Void, Never>] in
            defer { running = nil }
            return running ?? []
        }
        for loser in losers { loser.cancel() }
        return true
    }
}
