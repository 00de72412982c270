import Foundation
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol

/// ``FailingStore`` as a store that commits in place, the kind a session can run batches on at once.
final class ImmediateFailingStore: ImmediatelyCommittingStore, RecordQueries {
    let base = FailingStore()

    func commitImmediately(_ batch: StoreBatch) throws {
        if base.failing.load(ordering: .relaxed) { throw StorageUnavailableError(reason: "disk full (simulated)") }
        base.commits.add(1, ordering: .relaxed)
        base.inner.commitImmediately(batch)
    }

    func watermark() async throws -> IDWatermark { try await base.watermark() }
    func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot { try await base.restore(device) }
    func commit(_ batch: StoreBatch) async throws { try commitImmediately(batch) }
    func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord] {
        try await base.workouts(device: device, limit: limit)
    }
    func shares(limit: Int?) async throws -> [ShareRecord] { try await base.shares(limit: limit) }
    func workout(id: Int64) async throws -> WorkoutRecord? { try await base.workout(id: id) }
    func activeSessionCount() async throws -> Int { try await base.activeSessionCount() }
    func pendingShareCount() async throws -> Int { try await base.pendingShareCount() }
}

@Suite("Batches run at once when nothing has to wait")
struct ImmediateHandlingTests {
    typealias Lines = DeviceSessionTests

    static let fixedClock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_600_000_000) }

    @Test("same replies and same stored records as the awaited path, one commit per batch that changes something")
    func sameAsAwaited() async throws {
        let batches: [[DecodedLine]] = [
            [Lines.end(1)],
            [Lines.start(2), Lines.start(3), Lines.end(4)],
            [Lines.share(5), Lines.share(5), Lines.line("nope"), Lines.end(6)],
            [Lines.start(2)],
        ]
        let awaitedStore = InMemoryWorkoutStore()
        let awaited = try await WorkoutEngine(store: awaitedStore, clock: Self.fixedClock).session(for: "w")
        var expected: [[Reply]] = []
        for batch in batches { expected.append(await awaited.handle(batch)) }

        let store = ImmediateFailingStore()
        let session = try await WorkoutEngine(store: store, clock: Self.fixedClock).session(for: "w")
        #expect(await session.answerImmediately(batches[0]) == nil, "the first batch restores the session, which waits")
        var got = [await session.handle(batches[0])]
        for batch in batches.dropFirst() {
            let replies = try #require(await session.answerImmediately(batch))
            got.append(replies)
        }
        #expect(got == expected)
        #expect(got.last?.first?.replayed == true)
        #expect(
            store.base.commits.load(ordering: .relaxed) == batches.count - 1,
            "one per batch; the replayed one changes nothing"
        )
        #expect(try await store.workouts(device: nil, limit: nil) == awaitedStore.workouts(device: nil, limit: nil))
        #expect(try await store.shares(limit: nil) == awaitedStore.shares(limit: nil))
    }

    @Test("a store that does not commit in place always takes the awaited path")
    func otherStores() async throws {
        let session = try await WorkoutEngine(store: FailingStore()).session(for: "w")
        _ = await session.handle([Lines.end()])
        #expect(await session.answerImmediately([Lines.start(1)]) == nil)
    }

    @Test("a failed commit answers storage_unavailable, keeps nothing, and the next batch restores from the store")
    func failedCommit() async throws {
        let store = ImmediateFailingStore()
        let session = try await WorkoutEngine(store: store).session(for: "w")
        _ = await session.handle([Lines.end()])
        store.base.failing.store(true, ordering: .relaxed)
        let failed = try #require(await session.answerImmediately([Lines.start(1), Lines.line("nope")]))
        #expect(failed[0] == .error(.storageUnavailable, id: .integer(1)))
        if case .error(let error) = failed[1].outcome { #expect(error.code == .malformedJSON) }
        store.base.failing.store(false, ordering: .relaxed)
        #expect(await session.answerImmediately([Lines.start(1)]) == nil, "the advanced session was dropped")
        let retried = await session.handle([Lines.start(1)])
        #expect(retried[0].isSuccess && !retried[0].replayed)
        #expect(try await store.workouts(device: nil, limit: nil).count == 1)
    }

    /// What `events` emits from now on, an entry per event.
    ///
    /// For example "received 2 from device", "workout_started", ….
    final class EventTrace: Sendable {
        private let entries = Mutex<[String]>([])

        init(_ events: EngineEvents) {
            events.addObserver { [self] event in
                let entry =
                    switch event {
                    case .batchReceived(let batch): "received \(batch.lines.count) from \(batch.origin)"
                    case .batchAnswered(let batch): "answered \(batch.replies.count) from \(batch.origin)"
                    case .workoutStarted: "workout_started"
                    case .workoutEnded: "workout_ended"
                    case .shareQueued: "share_queued"
                    case .shareDelivered, .shareFailed, .storageFailed: "other"
                    }
                entries.withLock { $0.append(entry) }
            }
        }

        var all: [String] { entries.withLock { $0 } }
        func clear() { entries.withLock { $0.removeAll() } }
    }

    @Test(
        "both paths emit a batch's events in the documented order; a batch sent to the awaited path emits nothing twice"
    )
    func eventOrder() async throws {
        let events = EngineEvents()
        let trace = EventTrace(events)
        let session = try await WorkoutEngine(store: InMemoryWorkoutStore(), events: events).session(for: "w")
        #expect(await session.answerImmediately([Lines.end(1)]) == nil, "not restored yet")
        #expect(trace.all.isEmpty, "a batch not run announces nothing")
        _ = await session.handle([Lines.end(1)])
        let immediate = try #require(await session.answerImmediately([Lines.start(2), Lines.end(3)]))
        #expect(immediate.allSatisfy { $0.isSuccess })
        _ = await session.handle([Lines.share(4)], from: .control)
        #expect(
            trace.all == [
                "received 1 from device", "answered 1 from device",
                "received 2 from device", "workout_started", "workout_ended", "answered 2 from device",
                "received 1 from control", "share_queued", "answered 1 from control",
            ]
        )
    }

    @Test(
        "answered at once with its events held: nothing is emitted until announced, then the same events in order; any other entry announces first"
    )
    func heldEvents() async throws {
        let events = EngineEvents()
        let trace = EventTrace(events)
        let session = try await WorkoutEngine(store: InMemoryWorkoutStore(), events: events).session(for: "w")
        #expect(await session.answerImmediately([Lines.end(1)]) == nil, "not restored yet")
        _ = await session.handle([Lines.end(1)])
        trace.clear()

        let replies = try #require(await session.answerImmediately([Lines.start(2), Lines.end(3)]))
        #expect(replies.allSatisfy { $0.isSuccess })
        #expect(trace.all.isEmpty, "held until announced")
        await session.announceAnswered()
        await session.announceAnswered()
        #expect(trace.all == ["received 2 from device", "workout_started", "workout_ended", "answered 2 from device"])

        trace.clear()
        _ = try #require(await session.answerImmediately([Lines.share(4)]))
        _ = await session.handle([Lines.end(5)], from: .control)
        #expect(
            trace.all == [
                "received 1 from device", "share_queued", "answered 1 from device",
                "received 1 from control", "answered 1 from control",
            ],
            "the held batch's events come before the next batch's"
        )
    }

    @Test("awaited batches may hold their events too: held batches keep their order until announced")
    func heldEventsOfAwaitedBatches() async throws {
        let events = EngineEvents()
        let trace = EventTrace(events)
        let session = try await WorkoutEngine(store: InMemoryWorkoutStore(), events: events).session(for: "w")
        let first = await session.handle([Lines.start(1)], holdingEvents: true)
        #expect(trace.all.isEmpty, "held until announced")
        // A batch entering the session announces what is held first (as answerImmediately's are): the
        // dispatcher announces after writing each batch's replies, so this is only a late announcement.
        let second = await session.handle([Lines.end(2), Lines.share(3)], holdingEvents: true)
        #expect((first + second).allSatisfy { $0.isSuccess })
        #expect(trace.all == ["received 1 from device", "workout_started", "answered 1 from device"])
        await session.announceAnswered()
        #expect(
            trace.all == [
                "received 1 from device", "workout_started", "answered 1 from device",
                "received 2 from device", "workout_ended", "share_queued", "answered 2 from device",
            ]
        )
        // Not holding (a caller that cannot announce): emitted before the replies are returned.
        trace.clear()
        _ = await session.handle([Lines.start(4)])
        #expect(trace.all == ["received 1 from device", "workout_started", "answered 1 from device"])
    }
}

@Suite("A machine refills the arrays of the steps it ran")
struct RecycledStepTests {
    typealias Lines = DeviceSessionTests

    @Test("a step on recycled arrays holds its own batch alone, as a step on new arrays does")
    func recycledStepsHoldOnlyTheirBatch() {
        let batches: [[DecodedLine]] = [
            [Lines.start(1)], [Lines.end(2)], [Lines.share(3)], [Lines.start(4), Lines.end(5), Lines.share(6)],
            [Lines.start(7)], [Lines.line("nope")], [Lines.end(8)],
        ]
        let clock = WorkoutClock.wall(ImmediateHandlingTests.fixedClock)
        var recycling = SessionMachine(identity: "w")
        var fresh = SessionMachine(identity: "w")
        let recyclingIDs = IDAllocator()
        let freshIDs = IDAllocator()
        for batch in batches {
            let step = recycling.run(batch, ids: recyclingIDs, clock: clock)
            let expected = fresh.run(batch, ids: freshIDs, clock: clock)
            #expect(step.replies == expected.replies)
            #expect(step.batch == expected.batch)
            #expect(step.events.map { "\($0)" } == expected.events.map { "\($0)" })
            recycling.recycle(step.batch, events: step.events)
        }
    }

    @Test("a step handed back once nothing else holds it is filled again in place by the next step")
    func handedBackArraysAreFilledInPlace() {
        let clock = WorkoutClock.wall(ImmediateHandlingTests.fixedClock)
        var machine = SessionMachine(identity: "w")
        let ids = IDAllocator()
        let first = machine.run([Lines.start(1)], ids: ids, clock: clock)
        let started = first.batch.workouts.map(\.id)
        #expect(started.count == 1)
        let storage = first.batch.workouts.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        // What a session does once its batch is committed: the step is gone, its arrays go back to the machine.
        let batch = first.batch
        let events = first.events
        _ = consume first
        let capacity = batch.workouts.capacity
        machine.recycle(consume batch, events: consume events)
        // An array of the same size made meanwhile would get the storage back from the allocator had it been freed.
        var meanwhile: [WorkoutRecord] = []
        meanwhile.reserveCapacity(capacity)
        let second = machine.run([Lines.end(2)], ids: ids, clock: clock)
        #expect(second.batch.workouts.map(\.id) == started)
        #expect(second.batch.workouts.first?.endedAt != nil)
        #expect(second.batch.workouts.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } == storage)
        withExtendedLifetime(meanwhile) {}
    }
}
