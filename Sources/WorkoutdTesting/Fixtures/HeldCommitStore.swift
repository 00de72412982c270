import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Wraps a store so a test decides when each commit finishes and whether it fails.
///
/// As a syncing disk would: every ``commit(_:)`` waits until the test takes it with ``nextCommit()`` and lets it
/// through or fails it. No timing: a test sees a commit only once the session has made it, and it finishes only when
/// told.
public final class HeldCommitStore: SessionStore {
    public let inner: any SessionStore

    /// A commit waiting for the test's verdict.
    public struct HeldCommit: Sendable {
        public let batch: StoreBatch
        fileprivate let verdict: CheckedContinuation<Bool, Never>

        /// Lets it through to the wrapped store.
        public func succeed() { verdict.resume(returning: true) }
        /// Fails it with ``StorageUnavailableError`` before it reaches the wrapped store (nothing is written).
        public func fail() { verdict.resume(returning: false) }
    }

    private struct State {
        var arrived: [HeldCommit] = []
        var waiting: [CheckedContinuation<HeldCommit, Never>] = []
    }

    private let state = Mutex(State())

    public init(_ inner: any SessionStore) {
        self.inner = inner
    }

    /// The next commit the store was asked for, oldest first, once it has been asked.
    public func nextCommit() async -> HeldCommit {
        await withCheckedContinuation { continuation in
            let ready: HeldCommit? = state.withLock { state in
                if state.arrived.isEmpty {
                    state.waiting.append(continuation)
                    return nil
                }
                return state.arrived.removeFirst()
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Commits asked for and not yet taken by ``nextCommit()``.
    public var heldCommits: Int { state.withLock { $0.arrived.count } }

    public func commit(_ batch: StoreBatch) async throws {
        let succeeds = await withCheckedContinuation { (verdict: CheckedContinuation<Bool, Never>) in
            let held = HeldCommit(batch: batch, verdict: verdict)
            let taker: CheckedContinuation<HeldCommit, Never>? = state.withLock { state in
                if state.waiting.isEmpty {
                    state.arrived.append(held)
                    return nil
                }
                return state.waiting.removeFirst()
            }
            taker?.resume(returning: held)
        }
        guard succeeds else { throw StorageUnavailableError(reason: "commit failed (injected)") }
        try await inner.commit(batch)
    }

    public func watermark() async throws -> IDWatermark { try await inner.watermark() }
    public func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot { try await inner.restore(device) }
    public func pendingShareCount(device: DeviceIdentity) async throws -> Int {
        try await inner.pendingShareCount(device: device)
    }
    public var refusesNewWorkouts: Bool { inner.refusesNewWorkouts }
}

/// A ``HeldCommitStore`` that queues its commits as SQLite's store does (``QueueingCommitStore``).
///
/// So a session hands its stepped batches to ``CommitPipeline``: the same held commits, reached the way a durable
/// store's are.
public final class HeldQueueingCommitStore: QueueingCommitStore {
    public let held: HeldCommitStore

    public init(_ held: HeldCommitStore) {
        self.held = held
    }

    /// The pipeline queues one commit at a time, so each runs in the order queued.
    public func enqueueCommit(_ batch: StoreBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        Task { [held] in
            do {
                try await held.commit(batch)
                completion(.success(()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    public func commit(_ batch: StoreBatch) async throws { try await held.commit(batch) }
    public func watermark() async throws -> IDWatermark { try await held.watermark() }
    public func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot { try await held.restore(device) }
    public func pendingShareCount(device: DeviceIdentity) async throws -> Int {
        try await held.pendingShareCount(device: device)
    }
    public var refusesNewWorkouts: Bool { held.refusesNewWorkouts }
}
