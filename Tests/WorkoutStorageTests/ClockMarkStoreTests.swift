import Foundation
import GRDB
import ShareDelivery
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// Times taken before the clock was synchronised.
///
/// Stored with their mark, corrected once it is, shipped marked.
@Suite struct ClockMarkStoreTests {
    private func workouts(_ batch: ReplicationBatch) -> [WorkoutRecord] {
        batch.changes.compactMap { change in
            if case .workout(let workout) = change.record { return workout }
            return nil
        }
    }

    @Test func marksAreStoredListedCorrectedAndShipped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, replicationDoorbell: ReplicationDoorbell())
        // The board booted in 1970.
        let clock = SteppedClock(wall: Date(timeIntervalSince1970: 1_000), synchronized: false)
        let session = try await WorkoutEngine(store: store, clock: clock.workoutClock).session(for: "band")
        #expect(await session.handle([DecodedLines.start(1)]).allSatisfy(\.isSuccess))
        clock.pass(300)
        #expect(await session.handle([DecodedLines.end(2)]).allSatisfy(\.isSuccess))

        let stored = try #require(try await store.workouts(device: nil, limit: nil).first)
        #expect(stored.clockMark == .unsynchronized)
        #expect(stored.durationSeconds == 300)
        #expect(try await store.workout(id: stored.id)?.clockMark == .unsynchronized)
        #expect(workouts(try await store.pendingChanges(after: nil, limit: 100)).map(\.clockMark) == [.unsynchronized])

        // Not yet synchronised: nothing to correct.
        #expect(try await store.correctClockMarks(from: clock.reading) == 0)
        // NTP sets the clock 100 s after the end.
        let real = Date(timeIntervalSince1970: 1_780_000_000)
        clock.pass(100)
        clock.step(wallBy: real.timeIntervalSince(clock.reading.wall), synchronized: true)
        #expect(try await store.correctClockMarks(from: clock.reading) == 1)
        #expect(try await store.correctClockMarks(from: clock.reading) == 0, "once")
        let corrected = try #require(try await store.workout(id: stored.id))
        #expect(corrected.clockMark == .corrected)
        #expect(corrected.endedAt == real.addingTimeInterval(-100))
        #expect(corrected.startedAt == real.addingTimeInterval(-400))
        #expect(corrected.durationSeconds == 300)
        // Queued again, so the central store gets the corrected times.
        let shipped = workouts(try await store.pendingChanges(after: nil, limit: 100))
        #expect(shipped.map(\.clockMark) == [.corrected] && shipped.first?.startedAt == corrected.startedAt)

        // A workout timed on a synchronised clock writes no mark row at all.
        #expect(await session.handle([DecodedLines.start(3)]).allSatisfy(\.isSuccess))
        clock.pass(10)
        #expect(await session.handle([DecodedLines.end(4)]).allSatisfy(\.isSuccess))
        #expect(try await store.workouts(device: nil, limit: 1).first?.clockMark == nil)
        let rows = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workoutClock")
        }
        #expect(rows == 1)
        try store.close()
    }

    /// A session keeps only the id of its last-ended workout, never a copy of its times.
    ///
    /// A `share_workout` right after the correction, from the same session (not restored since), shares the workout as
    /// corrected; the sink receives the corrected times, and the listing (`workoutctl workouts`) shows them.
    @Test func aShareRightAfterTheCorrectionIsDeliveredWithTheCorrectedTimes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        // The board booted in 1970; the workout is started and ended before NTP sets the clock.
        let clock = SteppedClock(wall: Date(timeIntervalSince1970: 1_000), synchronized: false)
        let engine = try await WorkoutEngine(store: store, clock: clock.workoutClock)
        let session = engine.session(for: "band")
        #expect(await session.handle([DecodedLines.start(1)]).allSatisfy(\.isSuccess))
        clock.pass(300)
        let ended = await session.handle([DecodedLines.end(2)])
        #expect(ended.first?.line.contains("\"duration_seconds\":300") == true, "\(ended)")

        let real = Date(timeIntervalSince1970: 1_780_000_000)
        clock.pass(100)
        clock.step(wallBy: real.timeIntervalSince(clock.reading.wall), synchronized: true)
        #expect(try await store.correctClockMarks(from: clock.reading) == 1)

        let shared = await session.handle([DecodedLines.share(3)])
        guard case .ok(.workoutShared(let workoutID, _, let shareID))? = shared.first?.outcome else {
            Issue.record("share_workout: \(shared)")
            return
        }
        let listed = try #require(try await store.workouts(device: nil, limit: nil).first { $0.id == workoutID })
        #expect(listed.clockMark == .corrected)
        #expect(listed.startedAt == real.addingTimeInterval(-400) && listed.endedAt == real.addingTimeInterval(-100))

        let delivery = ShareDeliveryService(
            store: store,
            sinks: ShareSinkConfiguration().makeSinks(stateDirectory: directory.path),
            events: engine.events
        )
        let running = Task { try await delivery.run() }
        defer { running.cancel() }
        let file = directory.path + "/outbox/twitter/share-\(shareID).json"
        // Only a bound for a broken build: the queued share wakes the worker.
        #expect(try await eventually(timeout: .seconds(120)) { FileManager.default.fileExists(atPath: file) })
        let document =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        let workout = try #require(document?["workout"] as? [String: Any], "\(String(describing: document))")
        let iso = ISO8601DateFormatter()
        #expect((workout["id"] as? NSNumber)?.int64Value == workoutID, "\(workout)")
        #expect(workout["started_at"] as? String == iso.string(from: real.addingTimeInterval(-400)), "\(workout)")
        #expect(workout["ended_at"] as? String == iso.string(from: real.addingTimeInterval(-100)), "\(workout)")
        #expect((workout["duration_seconds"] as? NSNumber)?.doubleValue == 300, "\(workout)")
        try store.close()
    }

    @Test func anActiveWorkoutKeepsItsBootReadingAcrossARestartOfTheDaemon() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = SteppedClock(synchronized: true)
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            let session = try await WorkoutEngine(store: store, clock: clock.workoutClock).session(for: "band")
            #expect(await session.handle([DecodedLines.start(1)]).allSatisfy(\.isSuccess))
            try store.close()
        }
        clock.pass(120)
        clock.step(wallBy: -7200)  // stepped back while the daemon was down
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let replies = try await WorkoutEngine(store: store, clock: clock.workoutClock).session(for: "band").handle([
            DecodedLines.end(2)
        ])
        #expect(replies.first?.line.contains("\"duration_seconds\":120") == true, "\(replies)")
        try store.close()
    }

    /// The session a restart restores (the reply ring's newest slot) names its workouts.
    ///
    /// The active one comes with its mark and boot readings, the last ended one as its id.
    @Test func aRestoredSessionKeepsTheMarkOfItsActiveWorkout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = SteppedClock(synchronized: false)
        var stored: [WorkoutRecord] = []
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            let session = try await WorkoutEngine(store: store, clock: clock.workoutClock).session(for: "band")
            #expect(await session.handle([DecodedLines.start(1)]).allSatisfy(\.isSuccess))
            clock.pass(60)
            #expect(await session.handle([DecodedLines.end(2), DecodedLines.start(3)]).allSatisfy(\.isSuccess))
            stored = try await store.workouts(device: nil, limit: nil)
            try store.close()
        }
        try #require(stored.count == 2 && stored.allSatisfy { $0.clockMark == .unsynchronized })
        let snapshot = try await SQLiteWorkoutStore(stateDirectory: directory.path).restore("band")
        #expect(snapshot.state.activeWorkout == stored[0])
        #expect(snapshot.lastEndedWorkoutID == stored[1].id)
    }

    @Test func pruningAWorkoutTakesItsMarkAlong() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let clock = SteppedClock(wall: Date(timeIntervalSince1970: 1_000), synchronized: false)
        let session = try await WorkoutEngine(store: store, clock: clock.workoutClock).session(for: "band")
        for n in Int64(0)..<3 {
            #expect(await session.handle([DecodedLines.start(2 * n)]).allSatisfy(\.isSuccess))
            #expect(await session.handle([DecodedLines.end(2 * n + 1)]).allSatisfy(\.isSuccess))
        }
        #expect(try await store.pruneShipped(before: Date(timeIntervalSince1970: 10_000)) == 2, "all but the newest")
        let rows = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workoutClock")
        }
        #expect(rows == 1)
        try store.close()
    }
}
