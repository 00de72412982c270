import Logging
import ServiceLifecycle
import WorkoutStorage

/// While storing fails, reopens the database by its path as soon as the file there is another one.
///
/// The state directory's file system turned read-only (or failed with EIO), was repaired and mounted afresh at the same
/// path (``SQLiteWorkoutStore/reopenIfReplaced()``). A failure SQLite recovers from by itself (a full disk freed) needs
/// nothing: its next commit succeeds.
///
/// The state directory's lock moves to the new volume first (``HeldStateDirectoryLock/follow()``): while it cannot
/// (another daemon took the directory meanwhile) the database is not reopened and storing stays unavailable.
final class StorageRecovery: Service, Sendable, CustomStringConvertible {
    /// How often the path is looked at while failing (a stat); while storing works it is not looked at.
    static let period = Duration.seconds(2)

    private let store: SQLiteWorkoutStore
    private let lock: HeldStateDirectoryLock?
    private let failures: StorageFailureLog
    private let logger: Logger

    var description: String { "StorageRecovery" }

    init(store: SQLiteWorkoutStore, lock: HeldStateDirectoryLock?, failures: StorageFailureLog, logger: Logger) {
        self.store = store
        self.lock = lock
        self.failures = failures
        self.logger = logger
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [self] in
            var lastError: String?
            var failureStarts = failures.failureStarts.makeAsyncIterator()
            while !Task.isCancelled {
                if !failures.isFailing {
                    // While storing works, no timer: wait for the next failure (nil: shutting down).
                    guard await failureStarts.next() != nil else { return }
                    continue
                }
                try await Task.sleep(for: Self.period)
                guard failures.isFailing else { continue }
                do {
                    if let lock, try lock.follow() {
                        logger.notice(
                            "state directory lock taken again on the volume mounted afresh",
                            metadata: [
                                "state_dir": "\(lock.stateDirectory)"
                            ]
                        )
                    }
                } catch {
                    let text = "\(error)"
                    if text != lastError {
                        lastError = text
                        logger.error(
                            "state directory lock cannot be taken again; storage stays unavailable",
                            metadata: ["error": "\(text)"]
                        )
                    }
                    continue
                }
                do {
                    if try store.reopenIfReplaced() {
                        lastError = nil
                        logger.notice(
                            "database reopened: its file system was mounted afresh",
                            metadata: ["path": "\(store.path)"]
                        )
                    }
                } catch {
                    // Once per distinct reason: the same refusal every two seconds would flood the journal.
                    let text = "\(error)"
                    if text != lastError {
                        lastError = text
                        logger.warning("database could not be reopened yet", metadata: ["error": "\(text)"])
                    }
                }
            }
        }
    }
}
