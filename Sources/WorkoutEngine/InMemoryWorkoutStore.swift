import Foundation
import Synchronization
import WorkoutProtocol

/// A ``WorkoutStore`` that keeps everything in memory: for tests, benchmarks and `--in-memory` runs.
public final class InMemoryWorkoutStore: WorkoutStore {
    private struct Contents {
        var snapshots: [DeviceIdentity: DeviceSnapshot] = [:]
        var workouts: [Int64: WorkoutRecord] = [:]
        var shares: [Int64: ShareRecord] = [:]
        /// Ids of the shares still pending, so finding due ones does not scan every share ever made.
        var pendingShares: Set<Int64> = []
    }

    private let contents = Mutex(Contents())

    public init() {}

    public func watermark() async throws -> IDWatermark {
        contents.withLock { c in
            IDWatermark(workout: c.workouts.keys.max() ?? 0, share: c.shares.keys.max() ?? 0)
        }
    }

    public func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot {
        contents.withLock { $0.snapshots[device] ?? DeviceSnapshot() }
    }

    public func commit(_ batch: StoreBatch) async throws {
        contents.withLock { c in
            for workout in batch.workouts { c.workouts[workout.id] = workout }
            for share in batch.shares {
                c.shares[share.id] = share
                if share.status == .pending { c.pendingShares.insert(share.id) } else { c.pendingShares.remove(share.id) }
            }
            // In place: a copy of the snapshot's remembered replies per batch would cost more than the batch.
            Self.apply(batch, to: &c.snapshots[batch.device, default: DeviceSnapshot()])
        }
    }

    private static func apply(_ batch: StoreBatch, to snapshot: inout DeviceSnapshot) {
        snapshot.state = batch.state
        if let ended = batch.workouts.last(where: { $0.endedAt != nil }) { snapshot.lastEndedWorkout = ended }
        for entry in batch.replies { snapshot.recentReplies.remember(entry.reply, for: entry.id) }
    }

    public func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord] {
        let all = contents.withLock { c in
            c.workouts.values.filter { device == nil || $0.device == device }.sorted { $0.id > $1.id }
        }
        return limit.map { Array(all.prefix($0)) } ?? all
    }

    public func shares(limit: Int?) async throws -> [ShareRecord] {
        let all = contents.withLock { $0.shares.values.sorted { $0.id > $1.id } }
        return limit.map { Array(all.prefix($0)) } ?? all
    }

    public func workout(id: Int64) async throws -> WorkoutRecord? {
        contents.withLock { $0.workouts[id] }
    }

    public func dueShares(now: Date, limit: Int) async throws -> [ShareRecord] {
        contents.withLock { c in
            Array(c.pendingShares
                .compactMap { c.shares[$0] }
                .filter { $0.nextAttemptAt <= now }
                .sorted { $0.id < $1.id }
                .prefix(limit))
        }
    }

    public func recordDelivery(shareID: Int64, result: DeliveryResult) async throws {
        contents.withLock { c in
            guard var share = c.shares[shareID], share.status == .pending else { return }
            share.attempts += 1
            switch result {
            case .delivered(let at):
                share.status = .delivered
                c.pendingShares.remove(shareID)
                share.deliveredAt = at
                share.lastError = nil
            case .failed(let error, let retryAt):
                share.lastError = error
                share.nextAttemptAt = retryAt
            }
            c.shares[shareID] = share
        }
    }

    public func activeSessionCount() async throws -> Int {
        contents.withLock { $0.snapshots.values.filter { $0.state.activeWorkout != nil }.count }
    }
}
