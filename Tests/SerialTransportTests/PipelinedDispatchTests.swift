import Foundation
import NIOCore
import NIOEmbedded
import SerialTransport
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage
import WorkoutdTesting

/// Overlapping commits as a wearable sees them, on the real SQLite store.
///
/// Reads are sent while a batch commits, one of the commits fails on purpose (``HeldCommitStore``), and the
/// tests check what comes back, in what order, and what is stored.
extension DispatchTests {
    /// Waits until `session` has `count` batches stepped and not finished committing.
    ///
    /// It runs `channel`'s loop meanwhile: a testing loop runs a task its own handlers started (a batch's) only when
    /// asked to.
    static func untilAwaitingCommit(_ count: Int, _ session: DeviceSession, on channel: NIOAsyncTestingChannel) async {
        for _ in 0..<100_000 {
            await channel.testingEventLoop.run()
            if await session.batchesAwaitingCommit == count { return }
            await Task.yield()
        }
        Issue.record("the session never had \(count) batches awaiting their commit")
    }

    @Test(
        "pipelined reads over SQLite: a failed commit answers it and the batch stepped on it storage_unavailable, in order; the device is served again"
    )
    func pipelinedCommitFailure() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipelined-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sqlite = try SQLiteWorkoutStore(stateDirectory: directory)
        let store = HeldCommitStore(sqlite)
        let session = try await WorkoutEngine(store: store).session(for: "test-device")
        let (channel, _) = try await makeChannel(process: { lines in await session.handle(lines) })
        func send(_ line: String) async throws {
            try await channel.writeInbound(ByteBuffer(string: line + "\n"))
            await channel.testingEventLoop.run()
        }
        func read(_ count: Int) async throws -> [Reply] {
            try await replies(channel, count: count).map { try JSONDecoder().decode(Reply.self, from: Data($0.utf8)) }
        }

        try await send(CommandLines.start(id: 1))
        let startCommit = await store.nextCommit()
        // Sent before the start's reply: stepped on the started workout while the start commits.
        try await send(CommandLines.end(id: 2))
        await Self.untilAwaitingCommit(2, session, on: channel)
        // A third read waits for the first batch's replies (two batches in flight).
        try await send(CommandLines.start(id: 3))
        startCommit.succeed()
        #expect(try await read(1) == [.ok(.workoutStarted(workoutID: 1), id: .integer(1))])

        let endCommit = await store.nextCommit()
        // The third batch steps on the ended workout (a new start, fine there) while the end commits.
        await Self.untilAwaitingCommit(2, session, on: channel)
        endCommit.fail()
        #expect(
            try await read(2) == [
                .error(.storageUnavailable, id: .integer(2)), .error(.storageUnavailable, id: .integer(3)),
            ],
            "in read order"
        )
        #expect(store.heldCommits == 0, "the start stepped on the failed end never reached the store")

        // Stored: the start alone, still active; nothing of the end or of the second start.
        let stored = try await sqlite.workouts(device: "test-device", limit: nil)
        #expect(stored.map(\.id) == [1] && stored[0].endedAt == nil, "\(stored)")

        // The wearable retries: the end runs for real now, on the state the start's commit left.
        try await send(CommandLines.end(id: 2))
        await store.nextCommit().succeed()
        let retried = try await read(1)
        #expect(retried.count == 1 && retried[0].id == .integer(2) && !retried[0].replayed)
        if case .ok(.workoutEnded(let id, _)) = retried.first?.outcome {
            #expect(id == 1)
        } else {
            Issue.record("\(retried)")
        }
        #expect(try await sqlite.workouts(device: "test-device", limit: nil).first?.endedAt != nil)
        _ = try await channel.finish()
    }
}
