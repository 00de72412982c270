import Foundation
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol

@Suite("What batch observers are told of an emission")
struct EmittedEventsTests {
    typealias Lines = DeviceSessionTests

    @Test(
        "a batch begins with its first emission and is answered in its last, each kind counted; a delivery begins none"
    )
    func counts() async throws {
        let events = EngineEvents()
        let seen = Mutex<[EmittedEvents]>([])
        events.addBatchObserver { emitted in seen.withLock { $0.append(emitted) } }
        let session = try await WorkoutEngine(store: InMemoryWorkoutStore(), events: events).session(for: "w")
        let replies = await session.handle([
            Lines.start(1), Lines.end(2), Lines.share(3), Lines.start(4), Lines.start(5), Lines.line("nope"),
        ])
        #expect(replies.map(\.isSuccess) == [true, true, true, true, false, false])

        let emissions = seen.withLock { $0 }
        #expect(emissions.map(\.beginsBatch) == [true, false], "received alone, then what it caused and its answer")
        let last = try #require(emissions.last)
        #expect(last.workoutsStarted == 2 && last.workoutsEnded == 1 && last.sharesQueued == 1)
        #expect(last.sharesDelivered == 0 && last.shareFailures == 0 && last.storageFailures == 0)
        #expect(last.committedChanges == 4)
        #expect(last.answered?.replies == replies && last.answered?.lines.count == 6)
        #expect(emissions[0].answered == nil && emissions[0].committedChanges == 0)

        let share = ShareRecord(id: 1, workoutID: 1, device: "w", service: .twitter, queuedAt: Date())
        events.emit(contentsOf: [.shareDelivered(share), .shareFailed(share, error: "down")])
        let delivery = try #require(seen.withLock { $0 }.last)
        #expect(!delivery.beginsBatch && delivery.answered == nil)
        #expect(delivery.sharesDelivered == 1 && delivery.shareFailures == 1 && delivery.committedChanges == 0)
    }
}
