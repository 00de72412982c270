import Foundation
import GRDB
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// Migration v7 (the reply ring) carries a version 6 database forward.
///
/// It keeps sessions, remembered replies, the replication outbox's sequence, and the clock marks of the
/// session's workouts.
@Suite struct ReplyRingMigrationTests {
    @Test func aVersion6DatabaseKeepsItsSessionsRepliesClockMarksAndOutboxSequence() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Real records and replies, made by the engine: the ended workout timed before the clock was synchronised
        // (marked, in `workoutClock`), the active one after (its boot reading only in the session's JSON).
        let memory = InMemoryWorkoutStore()
        let clock = SteppedClock(synchronized: false)
        let first = try await WorkoutEngine(store: memory, clock: clock.workoutClock).session(for: "wearable-1")
        var original = await first.handle([DecodedLines.start(1), DecodedLines.end(2)])
        clock.pass(30)
        clock.step(wallBy: 0, synchronized: true)
        original += await first.handle([DecodedLines.start(3)])
        let texts = original.map(\.line)
        let workouts = try await memory.workouts(device: nil, limit: nil).sorted { $0.id < $1.id }
        try #require(workouts.count == 2)
        let (ended, active) = (workouts[0], workouts[1])
        try #require(ended.clockMark == .unsynchronized && ended.endedBoot != nil)
        try #require(active.clockMark == nil && active.startedBoot != nil)
        do {
            // A database as version 6 left it: the session row, replies as one row per batch, and an outbox
            // whose entries were shipped and pruned (only sqlite_sequence remembers that 5 were handed out).
            let queue = try DatabaseQueue(path: directory.databasePath)
            try StoreSchema.migrator.migrate(queue, upTo: "v6: the workoutd version that last wrote the database")
            try await queue.write { db in
                for workout in workouts {
                    try WorkoutRow(workout).insert(db)
                    if let mark = WorkoutClockRow(workout) {
                        try db.execute(sql: WorkoutClockRow.upsertSQL, arguments: mark.statementArguments)
                    }
                }
                try db.execute(
                    sql: """
                        INSERT INTO deviceSession (device, state, activeWorkoutID, lastEndedWorkoutID)
                        VALUES ('wearable-1', ?, ?, ?), ('wearable-2', '{"idle":true}', NULL, NULL)
                        """,
                    arguments: [try StoredJSON.encode(SessionState.active(active)), active.id, ended.id]
                )
                try db.execute(
                    sql: """
                        INSERT INTO replyLog (device, lastOrdinal, count, entries)
                        VALUES ('wearable-1', 2, 2, '[[1,' || ? || '],["2",' || ? || ']]'), ('wearable-1', 3, 1, '[[3,' || ? || ']]')
                        """,
                    arguments: [texts[0], texts[1], texts[2]]
                )
                for _ in 0..<5 {
                    try db.execute(
                        sql: "INSERT INTO replicationOutbox (kind, recordID, committedAt) VALUES ('workout', ?, 0)",
                        arguments: [ended.id]
                    )
                }
                try db.execute(sql: "DELETE FROM replicationOutbox; UPDATE replicationShipped SET throughSequence = 5")
            }
            try queue.close()
        }

        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, replicationDoorbell: ReplicationDoorbell())
        let snapshot = try await store.restore("wearable-1")
        #expect(snapshot.state.activeWorkout?.id == active.id)
        #expect(snapshot.state.activeWorkout?.startCommandID == .integer(3))
        #expect(snapshot.lastEndedWorkoutID == ended.id)
        // The active workout as it was, its boot reading included (moved from the session's JSON into the slot),
        // and the ended one as the store lists it, with its clock mark.
        #expect(snapshot.state.activeWorkout == active)
        #expect(try await store.workout(id: ended.id) == ended)
        #expect(snapshot.recentReplies.entries.map(\.0) == [.integer(1), .string("2"), .integer(3)])
        #expect(try await store.restore("wearable-2").state == .idle)
        #expect(try await store.activeSessionCount() == 1)

        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "wearable-1")
        let replayed = await session.handle([DecodedLines.start(1), DecodedLines.start(3)])
        #expect(replayed.map(\.replayed) == [true, true])
        #expect(replayed.map(\.line) == [texts[0], texts[2]].map { String($0.dropLast()) + #","replayed":true}"# })
        // The active workout ends, and the outbox goes on above the sequences handed out before.
        #expect(await session.handle([DecodedLines.end(4)]).first?.acknowledgedCommand == .endWorkout)
        let sequences = try await store.database.read { db in
            try Int64.fetchAll(db, sql: "SELECT sequence FROM replicationOutbox WHERE recordID != 0 ORDER BY sequence")
        }
        // Opened with replication on, the store queued both workouts (back-fill), then the end.
        #expect(sequences == [6, 7, 8])
        #expect(try await store.pendingChangeCount() == 3)
        #expect(await session.handle([DecodedLines.share(5)]).first?.isSuccess == true)
    }
}
