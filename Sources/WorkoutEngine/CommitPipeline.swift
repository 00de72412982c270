import Synchronization

/// One session's commits, run one at a time in the order their batches were stepped.
///
/// Each commit starts the moment the one before it succeeded.
///
/// A pipelining device's batch is stepped while the batch before it commits, and handed here at once. The next
/// commit is queued on the ``QueueingCommitStore`` (SQLite's single writer) by the thread that finished the one
/// before it, so the writer goes straight on with it; the device's loop only collects the results, in order.
/// Waiting for its turn on the loop instead left the writer idle for a loop's turn between commits, which cost
/// pipelined durable throughput (docs/decisions/0001-durable-path.md).
///
/// The rule is ``CommitChain``'s: a failed commit discards every batch handed over after it that was stepped on
/// the state it left (its generation); those finish with ``Discarded`` and never reach the store. The session
/// bumps its own chain's generation when it meets the failure, so both count failures alike.
public final class CommitPipeline: Sendable {
    /// A batch ahead of this one failed to commit, so this one, stepped on its changes, was not committed.
    public struct Discarded: Error, Sendable {}

    private struct Entry: Sendable {
        let batch: StoreBatch
        let generation: UInt64
        let result: OneShot<Void>
    }

    private struct State {
        var waiting: [Entry] = []
        var running = false
        /// Bumped by every failed commit, as ``CommitChain/generation`` is.
        var generation: UInt64 = 0
    }

    private let state = Mutex(State())
    private let store: any QueueingCommitStore

    public init(store: any QueueingCommitStore) {
        self.store = store
    }

    /// Hands over a stepped batch, stepped on the state of `generation`; call in step order. Its result finishes
    /// once it committed, failed, or was discarded (``Discarded``).
    public func submit(_ batch: StoreBatch, steppedIn generation: UInt64) -> OneShot<Void> {
        let entry = Entry(batch: batch, generation: generation, result: OneShot())
        let startNow = state.withLock { state -> Bool in
            state.waiting.append(entry)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if startNow { startNext() }
        return entry.result
    }

    /// Starts the oldest waiting batch that may commit, discarding those ahead of it that may not.
    private func startNext() {
        let (discarded, next) = state.withLock { state -> ([Entry], Entry?) in
            var discarded: [Entry] = []
            while let first = state.waiting.first, first.generation != state.generation {
                discarded.append(state.waiting.removeFirst())
            }
            guard !state.waiting.isEmpty else {
                state.running = false
                return (discarded, nil)
            }
            return (discarded, state.waiting.removeFirst())
        }
        for entry in discarded { entry.result.finish(.failure(Discarded())) }
        guard let next else { return }
        store.enqueueCommit(next.batch) { result in self.finished(next, result) }
    }

    private func finished(_ entry: Entry, _ result: Result<Void, any Error>) {
        if case .failure = result { state.withLock { $0.generation &+= 1 } }
        // The next commit first: this is the store's thread, which goes on with it.
        startNext()
        entry.result.finish(result)
    }
}
