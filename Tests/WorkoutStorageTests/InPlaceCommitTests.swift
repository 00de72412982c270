import Foundation
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// A lone batch on the durable store commits on the caller's thread.
///
/// ``SQLiteWorkoutStore/commitImmediately(_:)`` runs the same transaction and gives the same replies as the
/// awaited path, and only when nothing else waits.
@Suite struct InPlaceCommitTests {
    @Test("a lone batch on an idle writer is answered in place with the awaited path's replies, and is durable")
    func loneBatchCommitsInPlace() async throws {
        let batches: [[DecodedLine]] = [
            [DecodedLines.end(2)], [DecodedLines.share(3)], [DecodedLines.start(1)],
            [DecodedLines.start(4), DecodedLines.end(5)],
        ]
        let awaitedDirectory = try TemporaryDirectory()
        defer { awaitedDirectory.remove() }
        let (awaitedStore, awaited) = try await Self.wearable(in: awaitedDirectory)
        var expected: [[Reply]] = [await awaited.handle([DecodedLines.start(1)])]
        for batch in batches { expected.append(await awaited.handle(batch)) }

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, session) = try await Self.wearable(in: directory)
        #expect(store.immediateCommitWaitsForDisk && store.writerIsIdle)
        // The first batch restores the session from the store, which waits.
        var got = [await session.handle([DecodedLines.start(1)])]
        for batch in batches { got.append(try #require(await session.answerImmediately(batch))) }
        await session.announceAnswered()
        #expect(got == expected)
        #expect(got[3].first?.replayed == true)

        let stored = try await store.workouts(device: nil, limit: nil)
        #expect(stored.map(\.startCommandID) == [.integer(4), .integer(1)])
        #expect(stored.map(\.endCommandID) == [.integer(5), .integer(2)])
        #expect(try await store.shares(limit: nil).count == 1)
        try store.close()
        try awaitedStore.close()
        let reopened = try SQLiteWorkoutStore(stateDirectory: directory.path)
        #expect(
            try await reopened.workouts(device: nil, limit: nil) == stored,
            "every in-place commit survives a reopen"
        )
        let restored = try await WorkoutEngine(store: reopened).session(for: "wearable-1").handle([
            DecodedLines.start(4)
        ])
        #expect(restored.first?.replayed == true, "the reply ring was committed in place too")
        try reopened.close()
    }

    /// A store in `directory` and one wearable's session on it, with a clock that stands still.
    ///
    /// So both paths give the same replies.
    static func wearable(in directory: TemporaryDirectory) async throws -> (SQLiteWorkoutStore, DeviceSession) {
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store, clock: { Date(timeIntervalSince1970: 1_600_000_000) })
        return (store, engine.session(for: "wearable-1"))
    }

    @Test("input waiting behind the batch, or another write underway, sends the batch to the awaited path")
    func busyOrPipeliningTakesTheAwaitedPath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, session) = try await Self.wearable(in: directory)
        #expect(await session.handle([DecodedLines.start(1)]).first?.isSuccess == true)

        #expect(await session.answerImmediately([DecodedLines.end(2)], inputWaiting: true) == nil)
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Bool>(false)
        let holder = Task {
            try await store.writing { _ in
                entered.store(true, ordering: .relaxed)
                gate.wait()
            }
        }
        #expect(try await eventually { entered.load(ordering: .relaxed) })
        #expect(!store.writerIsIdle)
        #expect(
            await session.answerImmediately([DecodedLines.end(2)]) == nil,
            "the loop does not wait for another write"
        )
        gate.signal()
        try await holder.value
        #expect(store.writerIsIdle)
        #expect(await session.answerImmediately([DecodedLines.end(2)])?.first?.isSuccess == true)
        #expect(try await store.workouts(device: nil, limit: nil).first?.endCommandID == .integer(2))
        try store.close()
    }

    @Test(.enabled(if: TmpfsMount.isPermitted, "mount -t tmpfs is not permitted here (needs root with CAP_SYS_ADMIN)"))
    func aFailedInPlaceCommitAnswersStorageUnavailableAndKeepsNothing() async throws {
        let disk = try TmpfsMount(sizeKiB: 1024)
        defer { disk.unmount() }
        let store = try SQLiteWorkoutStore(stateDirectory: disk.path)
        let session = try await WorkoutEngine(store: store).session(for: "wearable-1")
        #expect(await session.handle([DecodedLines.start(1), DecodedLines.end(2)]).allSatisfy { $0.isSuccess })

        try disk.fill()
        let long = String(repeating: "x", count: 256)
        var refused: [Reply] = []
        var refusedIDs: Set<CommandID> = []
        for n in Int64(0)..<20 {
            var lines: [DecodedLine] = []
            for k in Int64(0)..<50 {
                lines += [
                    DecodedLines.start(1000 + n * 100 + 2 * k, location: long),
                    DecodedLines.end(1001 + n * 100 + 2 * k),
                ]
            }
            refused = try #require(
                await session.answerImmediately(lines),
                "the writer is idle and nothing waits behind the batch"
            )
            if !refused.allSatisfy({ $0.isSuccess }) {
                refusedIDs = Set(lines.compactMap(\.id))
                break
            }
        }
        #expect(!refused.isEmpty && refused.allSatisfy { $0.errorCode == .storageUnavailable })

        try disk.free()
        // The failed commit dropped the session's state: the next batch restores it from the store.
        #expect(await session.answerImmediately([DecodedLines.start(3)]) == nil)
        #expect(await session.handle([DecodedLines.start(3)]).first?.isSuccess == true)
        #expect(await session.answerImmediately([DecodedLines.end(4)])?.first?.isSuccess == true)
        let stored = Set(try await store.workouts(device: nil, limit: nil).compactMap(\.startCommandID))
        #expect(stored.isDisjoint(with: refusedIDs))
        #expect(stored.contains(.integer(3)))
        try store.close()
    }
}
