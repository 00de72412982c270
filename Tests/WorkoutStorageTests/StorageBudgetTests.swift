import Foundation
import GRDB
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// `storage.max_database_bytes` and the limits that need the SQLite store: what a full hub still does.
@Suite struct StorageBudgetTests {
    @Test func beyondTheBudgetNewWorkoutsGetStorageFullWhileEndsSharesAndRetriesWork() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Room for the two devices' reply rings (laid out whole at a device's first commit, 1,024 slots each)
        // and a few thousand workouts.
        let budget: Int64 = 400 * 1024
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, maximumDatabaseBytes: budget)
        #expect(!store.refusesNewWorkouts)
        let engine = try await WorkoutEngine(store: store)
        // A workout that began before the database filled up.
        let keeper = engine.session(for: "keeper")
        #expect(await keeper.handle([DecodedLines.start(1)]).map(\.isSuccess) == [true])

        let filler = engine.session(for: "filler")
        var id: Int64 = 0
        var refused: Reply?
        while refused == nil, id < 20_000 {
            let replies = await filler.handle([DecodedLines.start(id + 1), DecodedLines.end(id + 2)])
            id += 2
            if replies[0].errorCode == .storageFull {
                refused = replies[0]
            } else {
                #expect(replies.allSatisfy { $0.isSuccess })
            }
        }
        let full = try #require(refused)
        #expect(full.id == .integer(id - 1))
        #expect(store.refusesNewWorkouts)
        let bytes = try await store.database.read { try SQLiteWorkoutStore.bytesInUse($0) }
        #expect(bytes >= budget && bytes < budget + 16 * 1024)
        let workouts = try await store.workouts(device: "filler", limit: nil).count

        // Ends, shares of stored workouts and retries keep working; nothing new starts.
        let kept = await keeper.handle([DecodedLines.end(2), DecodedLines.share(3)])
        #expect(kept.map(\.isSuccess) == [true, true])
        // id - 3 is the last start before the refusal (the window keeps the newest 1,024 ids).
        let retried = await filler.handle([
            DecodedLines.start(id - 3), DecodedLines.start(id + 1), DecodedLines.share(id + 2),
        ])
        #expect(retried[0].replayed && retried[0].isSuccess)
        #expect(retried[1].errorCode == .storageFull)
        #expect(retried[2].isSuccess)
        #expect(try await store.workouts(device: "filler", limit: nil).count == workouts)
        // The refusal was not remembered: with room again (a reload's bigger budget), the same id starts.
        store.update(maximumDatabaseBytes: 0)
        #expect(await filler.handle([DecodedLines.end(id + 3)]).first?.errorCode == .noActiveWorkout)
        #expect(await filler.handle([DecodedLines.start(id + 1)]).first?.acknowledgedCommand == .startWorkout)
        #expect(!store.refusesNewWorkouts)
    }

    /// A commit measures the database only when its WAL writes may have added pages up to the budget.
    ///
    /// The three size pragmas are compiled anew on every run (``DatabaseSizeWatch``); the refusal above stays
    /// exact.
    @Test func aCommitFarFromTheBudgetSkipsMeasuringAndOneWithinReachMeasures() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, maximumDatabaseBytes: 1 << 30)
        let session = try await WorkoutEngine(store: store).session(for: "w")
        #expect(await session.handle([DecodedLines.start(1)]).first?.isSuccess == true)
        let measured = Mutex(0)
        try await store.database.writeWithoutTransaction { db in
            db.trace { event in
                if case .statement(let statement) = event, statement.sql == "PRAGMA page_count" {
                    measured.withLock { $0 += 1 }
                }
            }
        }
        for id in Int64(2)..<22 {
            #expect(
                await session.handle([id % 2 == 0 ? DecodedLines.end(id) : DecodedLines.start(id)]).first?.isSuccess
                    == true
            )
        }
        #expect(measured.withLock { $0 } == 0, "a gibibyte away, no commit measures")

        // One page short of the budget: every commit's frames could reach it.
        let bytes = try await store.database.read { try SQLiteWorkoutStore.bytesInUse($0) }
        store.update(maximumDatabaseBytes: bytes + Int64(SQLiteWorkoutStore.pageSize))
        #expect(!store.refusesNewWorkouts)
        for id in Int64(22)..<26 {
            _ = await session.handle([id % 2 == 0 ? DecodedLines.end(id) : DecodedLines.start(id)])
        }
        #expect(measured.withLock { $0 } == 4, "within reach of the budget, each commit measures")
    }

    @Test func aDatabaseOverItsBudgetAtOpenRefusesFromTheFirstCommand() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, maximumDatabaseBytes: 1024)
        #expect(store.refusesNewWorkouts)
        let engine = try await WorkoutEngine(store: store)
        #expect(await engine.session(for: "w").handle([DecodedLines.start(1)]).first?.errorCode == .storageFull)
        #expect(try await store.workouts(device: nil, limit: nil).isEmpty)
    }

    @Test func pendingSharesAreCountedPerDeviceFromTheDatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(
            store: store,
            limits: DeviceLimits(commandsPerSecond: 0, pendingSharesPerDevice: 2)
        )
        let replies = await engine.session(for: "a").handle([
            DecodedLines.start(1), DecodedLines.end(2), DecodedLines.share(3), DecodedLines.share(4),
            DecodedLines.share(5),
        ])
        #expect(replies.map(\.errorCode) == [nil, nil, nil, nil, .tooManyPendingShares])
        #expect(try await store.pendingShareCount(device: "a") == 2)
        #expect(try await store.pendingShareCount(device: "b") == 0)
        // After a restart the count comes back with the session.
        let restarted = try await WorkoutEngine(
            store: store,
            limits: DeviceLimits(commandsPerSecond: 0, pendingSharesPerDevice: 2)
        )
        #expect(
            await restarted.session(for: "a").handle([DecodedLines.share(6)]).first?.errorCode == .tooManyPendingShares
        )
        let oldest = try #require(try await store.dueShares(now: .distantFuture, limit: 1).first)
        try await store.recordDelivery(shareID: oldest.id, result: .delivered(at: Date()))
        #expect(await restarted.session(for: "a").handle([DecodedLines.share(6)]).first?.isSuccess == true)
    }

    @Test func anEvictedSessionReplaysItsOldIDsFromDisk() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        var first = await engine.session(for: "wanderer").handle([DecodedLines.start(1)])
        #expect(engine.sessionsInMemory == 1)
        #expect(engine.evictIdleSessions(idleFor: .seconds(3_600), now: .now + .seconds(3_601)) == 1)
        #expect(engine.sessionsInMemory == 0)
        let back = await engine.session(for: "wanderer").handle([DecodedLines.start(1), DecodedLines.end(2)])
        first[0].replayed = true
        #expect(back[0] == first[0])
        #expect(back[1].acknowledgedCommand == .endWorkout)
        #expect(engine.sessionsInMemory == 1)
    }
}
