import Foundation
import GRDB
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

@Suite struct SQLiteStoreEngineTests {
    @Test func workoutsAndSharesRoundTripThroughTheEngine() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "wearable-1")

        let replies = await session.handle([
            DecodedLines.start(1), DecodedLines.end(2), DecodedLines.share(3, .instagram),
        ])
        #expect(replies.map(\.isSuccess) == [true, true, true])

        let workouts = try await store.workouts(device: nil, limit: nil)
        #expect(workouts.count == 1)
        let workout = try #require(workouts.first)
        #expect(workout.location == "Gary's Gym")
        #expect(workout.date == DecodedLines.date)
        #expect(workout.intensityLevel == 5)
        #expect(workout.startCommandID == .integer(1))
        #expect(workout.endCommandID == .integer(2))
        #expect(workout.endedAt != nil)
        #expect(try await store.workout(id: workout.id) == workout)

        let shares = try await store.shares(limit: nil)
        #expect(shares.count == 1)
        #expect(shares.first?.service == .instagram)
        #expect(shares.first?.workoutID == workout.id)
        #expect(shares.first?.status == .pending)
        #expect(try await store.dueShares(now: Date(), limit: 10).map(\.id) == shares.map(\.id))
        #expect(try await store.workouts(device: "someone-else", limit: nil).isEmpty)
    }

    @Test func aRestartRestoresAnActiveWorkoutAndReplaysIDs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first: [Reply]
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            let engine = try await WorkoutEngine(store: store)
            first = await engine.session(for: "wearable-1").handle([
                DecodedLines.start(7), DecodedLines.end(8), DecodedLines.share(9), DecodedLines.start(10),
            ])
            try store.close()
        }
        #expect(first.map(\.isSuccess) == [true, true, true, true])

        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "wearable-1")
        let state = try await session.state()
        #expect(state.activeWorkout?.startCommandID == .integer(10))
        #expect(try await store.activeSessionCount() == 1)

        let replayed = await session.handle([DecodedLines.start(7), DecodedLines.start(10), DecodedLines.share(9)])
        for (original, again) in zip([first[0], first[3], first[2]], replayed) {
            #expect(again.replayed)
            // The same line with the one key added at the end.
            #expect(again.line == String(original.line.dropLast()) + #","replayed":true}"#)
        }
        // Replays executed nothing: still one active workout, two workouts, one share.
        #expect(try await store.workouts(device: nil, limit: nil).count == 2)
        #expect(try await store.shares(limit: nil).count == 1)

        // A new command after the restart gets a fresh id above the stored ones.
        let ended = await session.handle([DecodedLines.end(11)])
        #expect(ended.first?.isSuccess == true)
        let ids = try await store.workouts(device: nil, limit: nil).map(\.id)
        #expect(Set(ids).count == 2)
    }

    @Test func onlyTheLast1024IDsPerDeviceAreRemembered() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            let engine = try await WorkoutEngine(store: store)
            let session = engine.session(for: "wearable-1")
            // id 1 starts a workout; 2...1130 are refused (already active) and remembered as such.
            for chunk in stride(from: Int64(1), through: 1130, by: 100) {
                _ = await session.handle((chunk..<min(chunk + 100, 1131)).map { DecodedLines.start($0) })
            }
            let (slots, remembered) = try await store.database.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM reply") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM reply WHERE commandID IS NOT NULL") ?? 0
                )
            }
            // One slot per remembered reply, overwritten in place: 1...106 are gone, 107...1130 are the window.
            #expect(slots == 1024)
            #expect(remembered == 1024)
            _ = await engine.session(for: "wearable-2").handle([DecodedLines.start(1)])
            try store.close()
        }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        let replies = await engine.session(for: "wearable-1").handle(
            [DecodedLines.start(107), DecodedLines.start(1130), DecodedLines.start(1), DecodedLines.start(106)])
        #expect(replies[0].replayed && replies[0].errorCode == .workoutAlreadyActive)
        #expect(replies[1].replayed && replies[1].errorCode == .workoutAlreadyActive)
        // 1...106 fell out of the window: id 1 (once ok) runs again and is refused now, without the replayed flag.
        #expect(replies[2].replayed == false && replies[2].errorCode == .workoutAlreadyActive)
        #expect(replies[3].replayed == false)
        // Windows are per device: wearable-2's id 1 is its own, and still remembered.
        let other = await engine.session(for: "wearable-2").handle([DecodedLines.start(1)])
        #expect(other.first?.replayed == true && other.first?.isSuccess == true)
    }

    @Test func aVersion1DatabaseKeepsItsRememberedRepliesAfterMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/" + SQLiteWorkoutStore.fileName
        // Real replies, as the first release stored them: ok with a workout id, and an error.
        let engine1 = try await WorkoutEngine(store: InMemoryWorkoutStore())
        let original = await engine1.session(for: "wearable-1").handle(
            [
                DecodedLine(
                    id: .string("a"),
                    command: .success(
                        .startWorkout(Workout(location: "Home", date: DecodedLines.date, intensityLevel: 3))
                    )
                ),
                DecodedLines.start(8),
            ])
        let texts = original.map { String(decoding: ReplyEncoder().encodeLine($0).dropLast(), as: UTF8.self) }
        do {
            // A database as the first release left it: one row per remembered reply.
            let queue = try DatabaseQueue(path: path)
            try StoreSchema.migrator.migrate(queue, upTo: "v1: workouts, shares, sessions, remembered replies")
            try await queue.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO deviceSession (device, state) VALUES ('wearable-1', '{"idle":true}');
                        INSERT INTO rememberedReply (device, commandID, reply) VALUES ('wearable-1', '"a"', ?), ('wearable-1', '8', ?);
                        """,
                    arguments: [texts[0], texts[1]]
                )
            }
            try queue.close()
        }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        #expect(try await store.restore("wearable-1").recentReplies.count == 2)
        let engine = try await WorkoutEngine(store: store)
        let again = DecodedLine(id: .string("a"), command: .success(.endWorkout))
        let replies = await engine.session(for: "wearable-1").handle([again, DecodedLines.end(8), DecodedLines.end(9)])
        // The same lines as first sent, with the one key added at the end.
        #expect(replies[0].replayed && replies[1].replayed)
        for (reply, text) in zip(replies, texts) {
            #expect(ReplyEncoder().encodeLine(reply) == Array((text.dropLast() + #","replayed":true}"#).utf8) + [10])
        }
        // An id the first release never saw runs: the session is idle, so there is nothing to end.
        #expect(replies[2].replayed == false && replies[2].errorCode == .noActiveWorkout)
        let tables = try await store.database.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'remember%'"
            )
        }
        #expect(tables.isEmpty)
    }

    @Test func aReadBatchIsOneTransactionAllOrNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        // Commits counted where they are durable: the commit frames in the write-ahead log.
        let opened = try WALFrames(path: directory.databasePath + "-wal").commits.count
        func commits() throws -> Int { try WALFrames(path: directory.databasePath + "-wal").commits.count - opened }
        let engine = try await WorkoutEngine(store: store)
        var lines: [DecodedLine] = []
        for n in Int64(0)..<25 {
            lines += [DecodedLines.start(4 * n), DecodedLines.end(4 * n + 1), DecodedLines.share(4 * n + 2)]
        }
        let replies = await engine.session(for: "wearable-1").handle(lines)
        #expect(replies.allSatisfy { $0.isSuccess })
        #expect(try commits() == 1)
        #expect(try await store.workouts(device: nil, limit: nil).count == 25)

        // A batch that fails half-way leaves nothing behind: the share's workout does not exist.
        var broken = StoreBatch(device: "wearable-9", state: .idle)
        let workout = WorkoutRecord(
            id: 999,
            device: "wearable-9",
            workout: Workout(location: "x", date: DecodedLines.date, intensityLevel: 1),
            startedAt: Date()
        )
        broken.workouts = [workout]
        broken.shares = [
            ShareRecord(id: 999, workoutID: 12345, device: "wearable-9", service: .twitter, queuedAt: Date())
        ]
        await #expect(throws: StorageUnavailableError.self) { try await store.commit(broken) }
        #expect(try await store.workout(id: 999) == nil)
        #expect(try commits() == 1)
    }
}
