import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// The SQLite side of replication: what a commit leaves for the shipper, and what retention may remove.
@Suite struct ReplicationOutboxTests {
    /// `cycles` workouts started and ended on one wearable, with the store recording for replication.
    private func storeWithEndedWorkouts(
        _ cycles: Int,
        in directory: TemporaryDirectory
    ) async throws -> SQLiteWorkoutStore {
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, replicationDoorbell: ReplicationDoorbell())
        let session = try await WorkoutEngine(store: store).session(for: "wearable-1")
        for n in Int64(0)..<Int64(cycles) {
            #expect(await session.handle([DecodedLines.start(2 * n)]).allSatisfy(\.isSuccess))
            #expect(await session.handle([DecodedLines.end(2 * n + 1)]).allSatisfy(\.isSuccess))
        }
        return store
    }

    @Test func commitsQueueTheirRecordsInCommitOrderOnceEachInTheirNewestState() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await storeWithEndedWorkouts(3, in: directory)
        #expect(try await store.pendingChangeCount() == 6, "a start and an end per workout")
        let batch = try await store.pendingChanges(after: nil, limit: 100)
        #expect(batch.throughSequence == 6)
        let workouts = batch.changes.compactMap { change -> WorkoutRecord? in
            if case .workout(let workout) = change.record { return workout }
            return nil
        }
        #expect(workouts.map(\.id) == [1, 2, 3], "each workout once, in commit order")
        #expect(workouts.allSatisfy { $0.endedAt != nil }, "shipped as it is now: ended")

        // A limited read stops at its limit; marking covers exactly what was read.
        #expect(try await store.pendingChanges(after: nil, limit: 3).throughSequence == 3)
        // Reading past a batch still in flight (the shipper's second connection): the next ones, from after it.
        let ahead = try await store.pendingChanges(after: 3, limit: 100)
        #expect(ahead.changes.map(\.sequence) == [4, 6] && ahead.throughSequence == 6, "workout 2's end and workout 3")
        #expect(try await store.pendingChanges(after: 6, limit: 100).throughSequence == nil)
        try await store.markShipped(through: 3, at: Date())
        #expect(try await store.pendingChangeCount() == 3)
        let rest = try await store.pendingChanges(after: nil, limit: 100)
        #expect(rest.changes.count == 2 && rest.throughSequence == 6, "workout 2's end and workout 3")
    }

    /// The shipped mark is written with the next device commit, not in a transaction of its own.
    ///
    /// Or by `saveShippedMark()` once the shipper has caught up: what a restart finds is at most one mark behind, never
    /// ahead.
    @Test func theShippedMarkRidesTheNextCommitAndSurvivesARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func reopened() throws -> SQLiteWorkoutStore {
            try SQLiteWorkoutStore(stateDirectory: directory.path, replicationDoorbell: ReplicationDoorbell())
        }
        var store = try await storeWithEndedWorkouts(2, in: directory)
        #expect(try await store.pendingChangeCount() == 4)

        // Marked, nothing committed since: this store reports it, a restart (as after a crash) does not.
        try await store.markShipped(through: 2, at: Date())
        #expect(try await store.pendingChangeCount() == 2)
        try store.close()
        store = try reopened()
        #expect(try await store.pendingChangeCount() == 4, "an unwritten mark is lost: its changes ship again")

        // Marked, then a device commits: the mark is in that commit's transaction.
        try await store.markShipped(through: 2, at: Date())
        let session = try await WorkoutEngine(store: store).session(for: "wearable-1")
        #expect(await session.handle([DecodedLines.start(100)]).allSatisfy(\.isSuccess))
        try store.close()
        store = try reopened()
        #expect(try await store.pendingChangeCount() == 3, "changes 3, 4 and the new start")

        // Caught up: the shipper saves the mark itself.
        try await store.markShipped(through: 5, at: Date())
        try await store.saveShippedMark()
        try store.close()
        store = try reopened()
        #expect(try await store.pendingChangeCount() == 0)
        #expect(try await store.pendingChanges(after: nil, limit: 100).throughSequence == nil)
        try store.close()
    }

    @Test func withoutReplicationNothingIsQueued() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let session = try await WorkoutEngine(store: store).session(for: "wearable-1")
        #expect(await session.handle([DecodedLines.start(1), DecodedLines.end(2)]).allSatisfy(\.isSuccess))
        #expect(try await store.pendingChangeCount() == 0)
    }

    @Test func retentionPrunesOnlyOldShippedWorkouts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await storeWithEndedWorkouts(5, in: directory)
        let later = Date().addingTimeInterval(3600)
        // Nothing shipped yet: nothing may go, however old the cut-off.
        #expect(try await store.pruneShipped(before: later) == 0)
        #expect(try await store.workouts(device: nil, limit: nil).count == 5)

        // Workouts 1 and 2 shipped (outbox entries 1…4); too young for a cut-off an hour ago.
        try await store.markShipped(through: 4, at: Date())
        #expect(try await store.pruneShipped(before: Date().addingTimeInterval(-3600)) == 0)
        #expect(try await store.pruneShipped(before: later) == 2)
        #expect(try await store.workouts(device: nil, limit: nil).map(\.id).sorted() == [3, 4, 5])
        #expect(try await store.pendingChangeCount() == 6, "the unshipped changes are all still there")

        // Everything shipped: the last workout stays (the device's last ended one, and the id watermark).
        try await store.markShipped(through: 10, at: Date())
        #expect(try await store.pruneShipped(before: later) == 2)
        #expect(try await store.workouts(device: nil, limit: nil).map(\.id) == [5])
        #expect(try await store.watermark().workout == 5)
    }
}
