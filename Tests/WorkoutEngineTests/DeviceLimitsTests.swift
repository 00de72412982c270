import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// `limits.*` as a device meets them: refused commands run and store nothing, and say why.
@Suite("Device limits")
struct DeviceLimitsTests {
    static func line(_ text: String) -> DecodedLine { CommandLineDecoder().decode(Array(text.utf8)) }
    static func start(_ id: Int) -> DecodedLine { line(CommandLines.start(id: CommandLines.ID(id))) }
    static func end(_ id: Int) -> DecodedLine { line(CommandLines.end(id: CommandLines.ID(id))) }
    static func share(_ id: Int) -> DecodedLine {
        line(CommandLines.share(id: CommandLines.ID(id), service: "twitter"))
    }

    @Test("lines over the burst get rate_limited with retry_after_ms, run nothing, and a retry of their id runs later")
    func rateLimited() async throws {
        let store = InMemoryWorkoutStore()
        let engine = try await WorkoutEngine(store: store, limits: DeviceLimits(commandsPerSecond: 1, commandBurst: 3))
        let session = engine.session(for: "flood")
        let replies = await session.handle([Self.start(1), Self.end(2), Self.share(3), Self.start(4), Self.end(5)])
        #expect(replies.map(\.errorCode) == [nil, nil, nil, .rateLimited, .rateLimited])
        #expect(replies.map(\.id) == [1, 2, 3, 4, 5].map { CommandID.integer($0) })
        guard case .error(let error) = replies[3].outcome else { return }
        // One token at 1/s: a second, at most.
        #expect((1...1_000).contains(error.retryAfterMilliseconds ?? 0))
        #expect(
            String(decoding: ReplyEncoder().encodeLine(replies[3]), as: UTF8.self).hasPrefix(
                #"{"status":"error","id":4,"error":{"code":"rate_limited","retry_after_ms":"#
            )
        )
        #expect(ReplyEncoder().encodeLine(replies[3]) == ReplyEncoder().encodeLineThroughCodable(replies[3]))
        #expect(try await store.workouts(device: nil, limit: nil).count == 1)

        // Not remembered: once the limit allows, the same id runs (and a replay of an admitted one replays).
        engine.update(limits: .unlimited)
        let retried = await session.handle([Self.start(4), Self.start(1)])
        #expect(retried[0].acknowledgedCommand == .startWorkout && !retried[0].replayed)
        #expect(retried[1].replayed)
    }

    @Test("a replayed retry costs a token too; an operator's send costs none")
    func replaysCountOperatorsDoNot() async throws {
        let engine = try await WorkoutEngine(
            store: InMemoryWorkoutStore(),
            limits: DeviceLimits(commandsPerSecond: 1, commandBurst: 2)
        )
        let session = engine.session(for: "retrier")
        #expect(await session.handle([Self.start(1)]).map(\.isSuccess) == [true])
        let replays = await session.handle([Self.start(1), Self.start(1)])
        #expect(replays[0].replayed)
        #expect(replays[1].errorCode == .rateLimited)
        #expect(await session.handle([Self.end(2)], from: .control).map(\.isSuccess) == [true])
    }

    @Test("the share after the pending limit is refused until a delivery makes room")
    func pendingShares() async throws {
        let store = InMemoryWorkoutStore()
        let engine = try await WorkoutEngine(
            store: store,
            limits: DeviceLimits(commandsPerSecond: 0, pendingSharesPerDevice: 3)
        )
        let session = engine.session(for: "sharer")
        let replies = await session.handle([
            Self.start(1), Self.end(2), Self.share(3), Self.share(4), Self.share(5), Self.share(6),
        ])
        #expect(replies.map(\.errorCode) == [nil, nil, nil, nil, nil, .tooManyPendingShares])
        #expect(try await store.shares(limit: nil).count == 3)
        // Another device has its own allowance.
        let other = engine.session(for: "other")
        #expect(await other.handle([Self.start(1), Self.end(2), Self.share(3)]).allSatisfy { $0.isSuccess })

        let first = try #require(try await store.shares(limit: nil).map(\.id).min())
        try await store.recordDelivery(shareID: first, result: .delivered(at: Date()))
        let after = await session.handle([Self.share(6), Self.share(7)])
        #expect(after.map(\.errorCode) == [nil, .tooManyPendingShares])
        #expect(try await store.pendingShareCount(device: "sharer") == 3)
    }

    @Test("an idle session nobody holds leaves memory; one in use stays")
    func eviction() async throws {
        let engine = try await WorkoutEngine(store: InMemoryWorkoutStore())
        _ = await engine.session(for: "gone").handle([Self.start(1)])
        let held = engine.session(for: "attached")
        _ = await held.handle([Self.start(1)])
        #expect(engine.sessionsInMemory == 2)
        #expect(engine.evictIdleSessions(idleFor: .seconds(60)) == 0)
        #expect(engine.evictIdleSessions(idleFor: .seconds(60), now: .now + .seconds(61)) == 1)
        #expect(engine.sessionsInMemory == 1)
        // Back again: its state comes from the store, its old id replays.
        let back = await engine.session(for: "gone").handle([Self.start(1), Self.end(2)])
        #expect(back[0].replayed && back[1].acknowledgedCommand == .endWorkout)
        #expect(engine.evictIdleSessions(idleFor: .zero, now: .now + .seconds(1_000_000)) == 0)
        _ = held
    }
}
