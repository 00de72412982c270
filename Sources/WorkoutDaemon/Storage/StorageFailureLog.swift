import ControlProtocol
import Foundation
import Logging
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Puts storage failures in the log, where an operator reading the journal looks first.
///
/// A full disk fails every batch, so after the first warning the same failure is logged at most once a
/// minute, with how many batches failed meanwhile; the first success afterwards is logged too.
final class StorageFailureLog: Sendable {
    private struct State {
        var failing = false
        var lastLogged: ContinuousClock.Instant?
        var unlogged = 0
    }

    private let logger: Logger
    private let interval: Duration
    private let state = Mutex(State())
    /// `state.failing`, readable without the lock.
    ///
    /// A success while storage works (every batch) changes nothing.
    private let failing = Atomic<Bool>(false)
    /// What `workoutctl status` shows while storing fails.
    private let currentProblem = Mutex<StorageProblem?>(nil)

    /// One element each time storing starts to fail (after working).
    ///
    /// What ``StorageRecovery`` waits for, so a hub whose storage works runs no timer for it (idle wakeups).
    let failureStarts: AsyncStream<Void>
    private let failureStartsContinuation: AsyncStream<Void>.Continuation

    /// Why storing fails now, nil while it works.
    var problem: StorageProblem? { currentProblem.withLock { $0 } }
    var isFailing: Bool { failing.load(ordering: .relaxed) }

    init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.interval = interval
        (failureStarts, failureStartsContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func observe(_ events: EngineEvents) {
        events.addBatchObserver { [self] emitted in
            guard emitted.storageFailures > 0 else {
                // A batch's successes count once: `recovered()` takes the lock, and a batch has many.
                if emitted.committedChanges > 0 { recovered() }
                return
            }
            // Rare: in order, so a success between failures is logged where it happened.
            var succeeded = false
            for event in emitted.events {
                switch event {
                case .workoutStarted, .workoutEnded, .shareQueued:
                    succeeded = true
                case .storageFailed(let device, let reason):
                    if succeeded { recovered() }
                    succeeded = false
                    failed(device: device, reason: reason)
                case .batchReceived, .batchAnswered, .shareDelivered, .shareFailed:
                    break
                }
            }
            if succeeded { recovered() }
        }
    }

    private func failed(device: DeviceIdentity, reason: String) {
        currentProblem.withLock { problem in
            problem = StorageProblem(since: problem?.since ?? Date(), reason: reason)
        }
        let now = ContinuousClock.now
        let (began, suppressed): (Bool, Int?) = state.withLock { s in
            let began = !s.failing
            s.failing = true
            failing.store(true, ordering: .relaxed)
            if let last = s.lastLogged, now - last < interval {
                s.unlogged += 1
                return (began, nil)
            }
            defer {
                s.lastLogged = now
                s.unlogged = 0
            }
            return (began, s.unlogged)
        }
        if began { failureStartsContinuation.yield() }
        guard let suppressed else { return }
        logger.warning(
            "storage unavailable: commands are refused with storage_unavailable until it recovers",
            metadata: [
                "device": "\(device)", "error": "\(reason)", "failed_batches_since_last_warning": "\(suppressed)",
            ]
        )
    }

    private func recovered() {
        guard failing.load(ordering: .relaxed) else { return }
        let wasFailing = state.withLock { s in
            defer {
                s.failing = false
                s.lastLogged = nil
                s.unlogged = 0
                failing.store(false, ordering: .relaxed)
            }
            return s.failing
        }
        currentProblem.withLock { $0 = nil }
        if wasFailing { logger.notice("storage available again") }
    }
}
