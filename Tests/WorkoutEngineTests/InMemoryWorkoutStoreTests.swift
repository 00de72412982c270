import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol

@Suite struct InMemoryWorkoutStoreTests {
    static func workout(_ id: Int64, device: DeviceIdentity) -> WorkoutRecord {
        WorkoutRecord(
            id: id,
            device: device,
            workout: Workout(location: "Home", date: Date(timeIntervalSince1970: 0), intensityLevel: 2),
            startedAt: Date(timeIntervalSince1970: 100),
            startCommandID: nil
        )
    }

    @Test func commitsThatArriveOutOfIDOrderAreStoredAndListedByID() async throws {
        let store = InMemoryWorkoutStore()
        // Two devices: the one holding the lower ids commits last.
        var late = StoreBatch(device: "wearable-a", state: .idle)
        late.workouts = [Self.workout(2, device: "wearable-a"), Self.workout(5, device: "wearable-a")]
        late.shares = [
            ShareRecord(
                id: 1,
                workoutID: 5,
                device: "wearable-a",
                service: .twitter,
                queuedAt: Date(timeIntervalSince1970: 200)
            )
        ]
        var early = StoreBatch(device: "wearable-b", state: .idle)
        early.workouts = [Self.workout(6, device: "wearable-b"), Self.workout(9, device: "wearable-b")]
        early.shares = [
            ShareRecord(
                id: 3,
                workoutID: 9,
                device: "wearable-b",
                service: .facebook,
                queuedAt: Date(timeIntervalSince1970: 200)
            )
        ]
        try await store.commit(early)
        try await store.commit(late)

        #expect(try await store.workouts(device: nil, limit: nil).map(\.id) == [9, 6, 5, 2])
        #expect(try await store.workouts(device: "wearable-a", limit: 1).map(\.id) == [5])
        #expect(try await store.workout(id: 5)?.device == "wearable-a")
        #expect(try await store.workout(id: 4) == nil)
        #expect(try await store.workouts(ids: [9, 4, 2]).keys.sorted() == [2, 9])
        #expect(try await store.watermark() == IDWatermark(workout: 9, share: 3))
        #expect(try await store.dueShares(now: Date(timeIntervalSince1970: 300), limit: 10).map(\.id) == [1, 3])

        // Ending workout 5 replaces it in place.
        var ended = Self.workout(5, device: "wearable-a")
        ended.endedAt = Date(timeIntervalSince1970: 400)
        var end = StoreBatch(device: "wearable-a", state: .idle)
        end.workouts = [ended]
        try await store.commit(end)
        #expect(try await store.workouts(device: nil, limit: nil).map(\.id) == [9, 6, 5, 2])
        #expect(try await store.workout(id: 5)?.endedAt == Date(timeIntervalSince1970: 400))

        try await store.recordDeliveries([(shareID: 1, result: .delivered(at: Date(timeIntervalSince1970: 500)))])
        #expect(try await store.dueShares(now: Date(timeIntervalSince1970: 600), limit: 10).map(\.id) == [3])
        #expect(try await store.shares(limit: nil).map(\.status) == [.pending, .delivered])
    }

    /// The pending queue against a plain set.
    ///
    /// Shares committed mostly in id order (some out of it), delivered in random order, listed in id order, through its
    /// compactions.
    @Test func pendingSharesFollowCommitsAndDeliveriesInAnyOrder() async throws {
        let store = InMemoryWorkoutStore()
        var generator = SystemRandomNumberGenerator()
        var pending = Set<Int64>()
        var nextID: Int64 = 1000
        let at = Date(timeIntervalSince1970: 200)
        for round in 0..<40 {
            var batch = StoreBatch(device: "wearable-a", state: .idle)
            for _ in 0..<Int.random(in: 1...60, using: &generator) {
                // One in ten ids is below those already queued, as when two devices' commits cross.
                let id =
                    Int.random(in: 0..<10, using: &generator) == 0
                    ? Int64(round * 10 + 1)
                    : {
                        nextID += 1
                        return nextID
                    }()
                batch.shares.append(
                    ShareRecord(id: id, workoutID: 1, device: "wearable-a", service: .twitter, queuedAt: at)
                )
                pending.insert(id)
            }
            try await store.commit(batch)
            let delivered = pending.shuffled(using: &generator).prefix(
                Int.random(in: 0...pending.count, using: &generator)
            )
            try await store.recordDeliveries(delivered.map { (shareID: $0, result: .delivered(at: at)) })
            pending.subtract(delivered)
            #expect(try await store.pendingShareCount() == pending.count)
            #expect(try await store.dueShares(now: at, limit: .max).map(\.id) == pending.sorted())
        }
    }
}
