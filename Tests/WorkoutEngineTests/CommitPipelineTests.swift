import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol

/// ``CommitPipeline`` on a queueing store the test drives by hand.
///
/// Which commit the store was handed, when, and from where (the completion of the one before it), and what a failure
/// discards. No I/O, no timing.
@Suite struct CommitPipelineTests {
    /// A store that only records the commits queued on it; the test completes them.
    final class ManualQueueStore: QueueingCommitStore {
        struct Queued: Sendable {
            let batch: StoreBatch
            let completion: @Sendable (Result<Void, any Error>) -> Void
        }
        private let queued = Mutex<[Queued]>([])
        var count: Int { queued.withLock { $0.count } }
        func takeFirst() -> Queued? { queued.withLock { $0.isEmpty ? nil : $0.removeFirst() } }

        func enqueueCommit(_ batch: StoreBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
            queued.withLock { $0.append(Queued(batch: batch, completion: completion)) }
        }
        func watermark() async throws -> IDWatermark { IDWatermark() }
        func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot { DeviceSnapshot() }
        func commit(_ batch: StoreBatch) async throws {
            Issue.record("a queueing store is handed its commits by enqueueCommit")
        }
    }

    static func batch(_ number: Int) -> StoreBatch {
        var batch = StoreBatch(device: "w", state: .idle)
        batch.replies = [
            RecentReply(id: .integer(Int64(number)), reply: .error(.noActiveWorkout, id: .integer(Int64(number))))
        ]
        return batch
    }

    static func number(_ batch: StoreBatch) -> Int64? {
        if case .integer(let n) = batch.replies.first?.id { return n }
        return nil
    }

    struct DiskFull: Error {}

    /// Fails the commit `store` was handed first, which `result` is the outcome of.
    static func failFirst(_ result: OneShot<Void>, of store: ManualQueueStore) async throws {
        try #require(store.takeFirst()).completion(.failure(DiskFull()))
        await #expect(throws: DiskFull.self) { try await result.value() }
    }

    @Test("one commit at a time, in the order handed over, each queued by the completion of the one before it")
    func oneAtATimeInOrder() async throws {
        let store = ManualQueueStore()
        let pipeline = CommitPipeline(store: store)
        let results = (1...3).map { pipeline.submit(Self.batch($0), steppedIn: 0) }
        #expect(store.count == 1, "the second waits for the first")
        for expected in Int64(1)...3 {
            let queued = try #require(store.takeFirst())
            #expect(Self.number(queued.batch) == expected)
            #expect(store.count == 0)
            queued.completion(.success(()))
        }
        for result in results { try await result.value() }
        // Idle again: the next batch is queued at once.
        let fourth = pipeline.submit(Self.batch(4), steppedIn: 0)
        #expect(store.count == 1)
        store.takeFirst()?.completion(.success(()))
        try await fourth.value()
    }

    @Test(
        "a failure discards what was stepped on it, never handing it to the store; a batch of the next generation commits"
    )
    func aFailureDiscardsTheOldGeneration() async throws {
        let store = ManualQueueStore()
        let pipeline = CommitPipeline(store: store)
        let failing = pipeline.submit(Self.batch(1), steppedIn: 0)
        let steppedOnIt = [pipeline.submit(Self.batch(2), steppedIn: 0), pipeline.submit(Self.batch(3), steppedIn: 0)]
        try await Self.failFirst(failing, of: store)
        for result in steppedOnIt {
            await #expect(throws: CommitPipeline.Discarded.self) { try await result.value() }
        }
        #expect(store.count == 0, "nothing stepped on the failed batch reached the store")

        // The session restores from the store and steps again in generation 1.
        let restored = pipeline.submit(Self.batch(4), steppedIn: 1)
        let queued = try #require(store.takeFirst())
        #expect(Self.number(queued.batch) == 4)
        queued.completion(.success(()))
        try await restored.value()
    }

    @Test("a batch handed over after the failure but stepped before the session met it is discarded too")
    func lateSubmissionOfTheOldGenerationIsDiscarded() async throws {
        let store = ManualQueueStore()
        let pipeline = CommitPipeline(store: store)
        try await Self.failFirst(pipeline.submit(Self.batch(1), steppedIn: 0), of: store)
        let late = pipeline.submit(Self.batch(2), steppedIn: 0)
        await #expect(throws: CommitPipeline.Discarded.self) { try await late.value() }
        #expect(store.count == 0)
    }
}
