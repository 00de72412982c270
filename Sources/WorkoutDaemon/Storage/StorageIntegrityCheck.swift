import Logging
import ServiceLifecycle
import Synchronization
import WorkoutStorage

/// The full integrity check of a database too large to read whole before `READY=1`.
///
/// It runs once, after start-up, while devices are served (see ``SQLiteWorkoutStore/integrityCheckedAtOpen``).
///
/// A failure does not stop the daemon: what is stored stays as it is, commits that touch a damaged page
/// fail and get `storage_unavailable` replies (nothing unwritten is acknowledged), and the failure is logged
/// at error level and shown in `systemctl status` until a restart. The remedy is the operator's, as at open:
/// restore the database from a backup or move it aside.
struct StorageIntegrityCheck: Service, CustomStringConvertible {
    let store: SQLiteWorkoutStore
    let outcome: Outcome
    let logger: Logger
    /// Returns once the daemon serves (the check waits for it, so it never delays `READY=1`).
    let untilReady: @Sendable () async throws -> Void
    /// Called when the check failed, so the status line shows it.
    let failed: @Sendable () -> Void

    var description: String { "StorageIntegrityCheck" }

    /// What the check found, for the status line: nil while unknown or sound.
    final class Outcome: Sendable {
        private let problem = Mutex<String?>(nil)
        var failure: String? { problem.withLock { $0 } }
        fileprivate func record(_ failure: String) { problem.withLock { $0 = failure } }
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [store, outcome, logger, untilReady, failed] in
            try await untilReady()
            let started = ContinuousClock.now
            do {
                let problems = try await store.checkIntegrity()
                if problems.isEmpty {
                    logger.info(
                        "storage integrity check passed",
                        metadata: [
                            "path": "\(store.path)", "took": "\(ContinuousClock.now - started)",
                        ]
                    )
                } else {
                    outcome.record("database damaged")
                    logger.error(
                        "storage integrity check FAILED: the database is damaged; serving goes on, but restore it from a backup or move it aside",
                        metadata: [
                            "path": "\(store.path)", "problems": "\(problems.prefix(3).joined(separator: "; "))",
                        ]
                    )
                    failed()
                }
            } catch {
                // Shutdown interrupted the read: not a finding.
                if error is CancellationError || Task.isCancelled { return }
                outcome.record("integrity check could not run")
                logger.error(
                    "storage integrity check could not run",
                    metadata: ["path": "\(store.path)", "error": "\(error)"]
                )
                failed()
            }
        }
        // A service that returns ends the group: stay until shutdown.
        try? await gracefulShutdown()
    }
}
