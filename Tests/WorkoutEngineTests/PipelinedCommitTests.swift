import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// A pipelining device's next batch is stepped while the batch before it commits.
///
/// Its reply still waits for its own commit, and a failed commit discards every batch stepped on top of it.
/// Commits are held by ``HeldCommitStore`` until the test lets them through or fails them: no timing.
@Suite struct PipelinedCommitTests {
    static func line(_ text: String) -> DecodedLine { CommandLineDecoder().decode(Array(text.utf8)) }
    static func start(_ id: Int) -> DecodedLine { line(CommandLines.start(id: CommandLines.ID(id))) }
    static func end(_ id: Int) -> DecodedLine { line(CommandLines.end(id: CommandLines.ID(id))) }
    static func share(_ id: Int) -> DecodedLine { line(CommandLines.share(id: CommandLines.ID(id))) }

    /// The session's events as short words, in order.
    final class Trace: Sendable {
        private let entries = Mutex<[String]>([])
        var all: [String] { entries.withLock { $0 } }

        func record(_ event: EngineEvent) {
            let entry: String
            switch event {
            case .batchReceived(let batch):
                entry = "received [\(batch.lines.compactMap(\.id).map { "\($0)" }.joined(separator: ", "))]"
            case .batchAnswered(let batch):
                entry = "answered [\(batch.replies.map { $0.errorCode?.rawValue ?? "ok" }.joined(separator: ", "))]"
            case .workoutStarted: entry = "workout_started"
            case .workoutEnded: entry = "workout_ended"
            case .shareQueued: entry = "share_queued"
            case .shareDelivered, .shareFailed: entry = "share delivery"
            case .storageFailed: entry = "storage_failed"
            }
            entries.withLock { $0.append(entry) }
        }
    }

    /// Waits, yielding, until `session` has `count` batches stepped and not finished committing.
    static func untilAwaitingCommit(_ count: Int, _ session: DeviceSession) async {
        for _ in 0..<1_000_000 {
            if await session.batchesAwaitingCommit == count { return }
            await Task.yield()
        }
        Issue.record("the session never had \(count) batches awaiting their commit")
    }

    /// Held commits reached by committing at the batch's turn, or through ``CommitPipeline``.
    ///
    /// A store that commits at the batch's turn does the first, SQLite's store (a ``QueueingCommitStore``) the second:
    /// the rules are the same.
    static func sessionStore(_ held: HeldCommitStore, queueing: Bool) -> any SessionStore {
        queueing ? HeldQueueingCommitStore(held) : held
    }

    @Test(arguments: [false, true])
    func theNextBatchStepsWhileTheOneBeforeCommitsAndIsAnsweredAfterItsOwnCommit(queueing: Bool) async throws {
        let inner = InMemoryWorkoutStore()
        let store = HeldCommitStore(inner)
        let session = try await WorkoutEngine(store: Self.sessionStore(store, queueing: queueing)).session(for: "w")
        let first = Task { await session.handle([Self.start(1)]) }
        let firstCommit = await store.nextCommit()
        let second = Task { await session.handle([Self.end(2)]) }
        // Stepped on the started workout while its start is still committing; its own commit waits behind it.
        await Self.untilAwaitingCommit(2, session)
        #expect(store.heldCommits == 0, "one commit at a time per device")
        firstCommit.succeed()
        #expect(await first.value.map(\.outcome) == [.ok(.workoutStarted(workoutID: 1))])
        let secondCommit = await store.nextCommit()
        #expect(secondCommit.batch.workouts.map(\.endedAt).count == 1 && secondCommit.batch.workouts[0].endedAt != nil)
        #expect(
            try await inner.workouts(device: "w", limit: nil).first?.endedAt == nil,
            "not answered before its commit"
        )
        secondCommit.succeed()
        let ended = await second.value
        #expect(
            ended.first?.outcome
                == .ok(.workoutEnded(workoutID: 1, durationSeconds: ended.first?.outcome.duration ?? -1))
        )
        #expect(try await inner.workouts(device: "w", limit: nil).first?.endedAt != nil)
        #expect(await session.batchesAwaitingCommit == 0)
    }

    @Test(arguments: [false, true])
    func aFailedCommitDiscardsEveryBatchSteppedOnItAndTheDeviceIsServedAgain(queueing: Bool) async throws {
        let inner = InMemoryWorkoutStore()
        let store = HeldCommitStore(inner)
        let trace = Trace()
        let events = EngineEvents()
        events.addObserver { trace.record($0) }
        let session = try await WorkoutEngine(store: Self.sessionStore(store, queueing: queueing), events: events)
            .session(for: "w")
        // Stored before the failure: a workout started and ended, to be shared.
        let setup = Task { await session.handle([Self.start(1), Self.end(2)]) }
        await store.nextCommit().succeed()
        _ = await setup.value

        let starting = Task { await session.handle([Self.start(3)]) }
        let failing = await store.nextCommit()
        // Stepped on the start that is still committing: a retry of it (a replay), its end, a share, and a
        // line that does not decode.
        let retrying = Task { await session.handle([Self.start(3), Self.end(4)]) }
        await Self.untilAwaitingCommit(2, session)
        let sharing = Task { await session.handle([Self.share(5), Self.line("nope")]) }
        await Self.untilAwaitingCommit(3, session)
        failing.fail()

        #expect(await starting.value == [.error(.storageUnavailable, id: .integer(3))])
        #expect(
            await retrying.value == [
                .error(.storageUnavailable, id: .integer(3)), .error(.storageUnavailable, id: .integer(4)),
            ],
            "the replay of a start that was not stored is not an ok"
        )
        let shared = await sharing.value
        #expect(shared.first == .error(.storageUnavailable, id: .integer(5)))
        #expect(shared.last?.errorCode == .malformedJSON, "a line that never needed storage keeps its own error")
        try #require(store.heldCommits == 0, "the batches stepped on the failed one never reached the store")
        #expect(
            try await inner.workouts(device: "w", limit: nil).map(\.id) == [1],
            "nothing of the failed batches is stored"
        )
        #expect(try await inner.shares(limit: nil).isEmpty)

        // Served again, from what the last successful commit left: idle, workout 1 ended, the retried ids new.
        let retried = Task { await session.handle([Self.start(3), Self.share(5)]) }
        let commit = await store.nextCommit()
        #expect(commit.batch.workouts.count == 1 && commit.batch.shares.map(\.workoutID) == [1])
        commit.succeed()
        let replies = await retried.value
        #expect(
            !replies[0].replayed && replies[0].outcome == .ok(.workoutStarted(workoutID: replies[0].outcome.workoutID))
        )
        #expect(
            replies[1].outcome
                == .ok(.workoutShared(workoutID: 1, service: .twitter, shareID: replies[1].outcome.shareID))
        )
        #expect(try await inner.workouts(device: "w", limit: nil).count == 2)
        #expect(try await session.state().activeWorkout != nil)

        // Each batch's events together and in order, the discarded ones as storage failures.
        #expect(
            Array(trace.all.suffix(13)) == [
                "received [3]", "storage_failed", "answered [storage_unavailable]",
                "received [3, 4]", "storage_failed", "answered [storage_unavailable, storage_unavailable]",
                "received [5]", "storage_failed", "answered [storage_unavailable, malformed_json]",
                "received [3, 5]", "workout_started", "share_queued", "answered [ok, ok]",
            ],
            "\(trace.all)"
        )
    }

    @Test func aBatchThatChangesNothingStillWaitsForTheCommitBeforeIt() async throws {
        let store = HeldCommitStore(InMemoryWorkoutStore())
        let session = try await WorkoutEngine(store: store).session(for: "w")
        let starting = Task { await session.handle([Self.start(1)]) }
        let commit = await store.nextCommit()
        let replaying = Task { await session.handle([Self.start(1)]) }
        await Self.untilAwaitingCommit(2, session)
        commit.succeed()
        #expect(await starting.value.first?.isSuccess == true)
        let replay = await replaying.value
        #expect(replay.first?.replayed == true && replay.first?.isSuccess == true, "replayed once the start is stored")
    }

    @Test func nearThePendingShareLimitABatchCountsTheSharesStillCommittingBeforeIt() async throws {
        let inner = InMemoryWorkoutStore()
        let store = HeldCommitStore(inner)
        let limits = DeviceLimits(commandsPerSecond: 0, pendingSharesPerDevice: 2, sessionIdleTimeout: .zero)
        let session = try await WorkoutEngine(store: store, limits: limits).session(for: "w")
        let setup = Task { await session.handle([Self.start(1), Self.end(2)]) }
        await store.nextCommit().succeed()
        _ = await setup.value

        let first = Task { await session.handle([Self.share(3)]) }
        let firstCommit = await store.nextCommit()
        // Two more shares could reach the limit of 2: the batch reads the store's count, which must first hold the
        // share still committing (else it would count 0 and queue both, 3 pending). Whether it is already waiting
        // when the first commit finishes or starts after, the outcome is the same; the yields make the wait likely.
        let second = Task { await session.handle([Self.share(4), Self.share(5)]) }
        for _ in 0..<100 { await Task.yield() }
        firstCommit.succeed()
        #expect(await first.value.first?.isSuccess == true)
        await store.nextCommit().succeed()
        let replies = await second.value
        #expect(replies.first?.isSuccess == true)
        #expect(replies.last == .error(.tooManyPendingShares(limit: 2), id: .integer(5)))
        #expect(try await inner.shares(limit: nil).count == 2)
    }

    @Test func theChainCommitsInOrderAndAFailureDiscardsWhatWasSteppedBeforeIt() {
        var chain = CommitChain()
        let first = chain.join(steppedIn: chain.generation)
        let second = chain.join(steppedIn: chain.generation)
        #expect(chain.isTurn(first) && !chain.isTurn(second) && chain.inFlight == 2)
        #expect(chain.mayCommit(first))
        chain.commitFailed()
        // A step that read its state before the failure and joins after it is discarded too.
        let late = chain.join(steppedIn: first.generation)
        chain.finish(first)
        #expect(chain.isTurn(second) && !chain.mayCommit(second))
        chain.finish(second)
        #expect(chain.isTurn(late) && !chain.mayCommit(late))
        let fresh = chain.join(steppedIn: chain.generation)
        chain.finish(late)
        #expect(chain.isTurn(fresh) && chain.mayCommit(fresh), "a batch stepped on the restored state commits")
        chain.finish(fresh)
        #expect(chain.isSettled)
    }
}

extension Reply.Outcome {
    var workoutID: Int64 {
        if case .ok(.workoutStarted(let id)) = self { id } else { -1 }
    }

    var shareID: Int64 {
        if case .ok(.workoutShared(_, _, let id)) = self { id } else { -1 }
    }
}
