import Foundation
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// Wraps the in-memory store so a test can make it fail like a full disk would.
final class FailingStore: SessionStore, RecordQueries {
    let inner = InMemoryWorkoutStore()
    let failing = Atomic<Bool>(false)
    let commits = Atomic<Int>(0)

    private func check() throws {
        if failing.load(ordering: .relaxed) { throw StorageUnavailableError(reason: "disk full (simulated)") }
    }

    func watermark() async throws -> IDWatermark { try await inner.watermark() }
    func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot {
        try check()
        return try await inner.restore(device)
    }
    func commit(_ batch: StoreBatch) async throws {
        try check()
        commits.add(1, ordering: .relaxed)
        try await inner.commit(batch)
    }
    func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord] {
        try await inner.workouts(device: device, limit: limit)
    }
    func shares(limit: Int?) async throws -> [ShareRecord] { try await inner.shares(limit: limit) }
    func workout(id: Int64) async throws -> WorkoutRecord? { try await inner.workout(id: id) }
    func activeSessionCount() async throws -> Int { try await inner.activeSessionCount() }
    func pendingShareCount() async throws -> Int { try await inner.pendingShareCount() }
}

@Suite("Device sessions")
struct DeviceSessionTests {

    static func line(_ text: String) -> DecodedLine { CommandLineDecoder().decode(Array(text.utf8)) }
    static func start(_ id: Int? = nil) -> DecodedLine {
        line(CommandLines.start(id: id.map(CommandLines.ID.init)))
    }
    static func end(_ id: Int? = nil) -> DecodedLine { line(CommandLines.end(id: id.map(CommandLines.ID.init))) }
    static func share(_ id: Int? = nil) -> DecodedLine {
        line(CommandLines.share(id: id.map(CommandLines.ID.init), service: "facebook"))
    }

    @Test("start, end and share follow the session state")
    func stateMachine() async throws {
        let store = InMemoryWorkoutStore()
        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "watch-1")
        let replies = await session.handle([
            Self.share(), Self.end(), Self.start(), Self.start(), Self.end(), Self.share(),
        ])
        #expect(
            replies.map(\.outcome) == [
                .error(.nothingToShare), .error(.noActiveWorkout), .ok(.workoutStarted(workoutID: 1)),
                .error(.workoutAlreadyActive), replies[4].outcome,
                .ok(.workoutShared(workoutID: 1, service: .facebook, shareID: 1)),
            ]
        )
        guard case .ok(.workoutEnded(let id, let duration)) = replies[4].outcome else {
            Issue.record("end_workout failed: \(replies[4])")
            return
        }
        #expect(id == 1 && duration >= 0)
        let stored = try await store.workouts(device: "watch-1", limit: nil)
        #expect(stored.count == 1 && stored[0].endedAt != nil && stored[0].location == "Gym")
        #expect(try await store.shares(limit: nil).map(\.service) == [.facebook])
    }

    @Test("devices have separate sessions; the same identity gets the same session back")
    func sessionsPerIdentity() async throws {
        let engine = try await WorkoutEngine(store: InMemoryWorkoutStore())
        _ = await engine.session(for: "a").handle([Self.start()])
        #expect(await engine.session(for: "b").handle([Self.end()]).first?.outcome == .error(.noActiveWorkout))
        #expect(await engine.session(for: "a").handle([Self.end()]).first?.isSuccess == true)
    }

    @Test("a retried id gets the original reply with replayed:true and is not run again")
    func idempotentRetry() async throws {
        let store = InMemoryWorkoutStore()
        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "watch")
        let first = await session.handle([Self.start(1)])
        let retried = await session.handle([Self.start(1), Self.start(2)])
        #expect(retried[0].replayed && retried[0].outcome == first[0].outcome && retried[0].id == .integer(1))
        #expect(retried[1].outcome == .error(.workoutAlreadyActive))
        #expect(try await store.workouts(device: nil, limit: nil).count == 1)
        let line = String(decoding: ReplyEncoder().encodeLine(retried[0]), as: UTF8.self)
        #expect(line.contains(#""replayed":true"#))
    }

    @Test("a restored session (as after a restart) keeps its active workout and its replies")
    func restoreFromStore() async throws {
        let store = InMemoryWorkoutStore()
        _ = await (try await WorkoutEngine(store: store)).session(for: "w").handle([Self.start(10)])
        let restarted = try await WorkoutEngine(store: store)
        let session = restarted.session(for: "w")
        #expect(try await session.state().activeWorkout?.location == "Gym")
        let replies = await session.handle([Self.start(10), Self.start(11), Self.end(12)])
        #expect(replies[0].replayed)
        #expect(replies[1].outcome == .error(.workoutAlreadyActive))
        #expect(replies[2].outcome == .ok(.workoutEnded(workoutID: 1, durationSeconds: replies[2].outcome.duration)))
        // New ids continue above the stored ones.
        #expect(await session.handle([Self.start()]).first?.outcome == .ok(.workoutStarted(workoutID: 2)))
    }

    @Test("when storage fails, commands get storage_unavailable, nothing changes, and it recovers")
    func storageUnavailable() async throws {
        let store = FailingStore()
        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "w")
        _ = await session.handle([Self.end()])  // restores the session while storage works
        store.failing.store(true, ordering: .relaxed)
        let failed = await session.handle([Self.start(1), Self.line("nope")])
        #expect(failed[0] == .error(.storageUnavailable, id: .integer(1)))
        if case .error(let error) = failed[1].outcome { #expect(error.code == .malformedJSON) }
        store.failing.store(false, ordering: .relaxed)
        // The retry really runs (the failed reply was not remembered) and the state was not changed.
        let retried = await session.handle([Self.start(1)])
        #expect(retried[0].isSuccess && !retried[0].replayed)
        #expect(try await store.workouts(device: nil, limit: nil).count == 1)
    }

    @Test("a batch is one commit (group commit)")
    func groupCommit() async throws {
        let store = FailingStore()
        let session = try await WorkoutEngine(store: store).session(for: "w")
        _ = await session.handle(
            (0..<50).flatMap { i in [Self.start(3 * i), Self.end(3 * i + 1), Self.share(3 * i + 2)] }
        )
        #expect(store.commits.load(ordering: .relaxed) == 1)
        #expect(try await store.shares(limit: nil).count == 50)
    }
}

extension Reply.Outcome {
    var duration: Double {
        if case .ok(.workoutEnded(_, let duration)) = self { duration } else { -1 }
    }
}
