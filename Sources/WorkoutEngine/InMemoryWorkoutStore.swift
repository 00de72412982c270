import Foundation
import Synchronization
import WorkoutProtocol

/// A ``WorkoutStore`` that keeps everything in memory: for tests, benchmarks and `--in-memory` runs.
public final class InMemoryWorkoutStore: ImmediatelyCommittingStore, ShareQueueStore, RecordQueries, DeviceNameStore {
    private struct Contents {
        var sessions: [DeviceIdentity: StoredSession] = [:]
        var workouts = IDOrderedRecords<WorkoutRecord>()
        var shares = IDOrderedRecords<ShareRecord>()
        /// The shares still pending, in id order.
        ///
        /// So finding due ones neither scans every share ever made nor sorts the backlog under the lock that every
        /// commit takes.
        var pendingShares = PendingQueue()
        /// How many of the pending shares each device queued (`limits.pending_shares_per_device`).
        var pendingByDevice: [DeviceIdentity: Int] = [:]
        var deviceNames: [DeviceIdentity: String] = [:]
    }

    private let contents = Mutex(Contents())

    public init() {}

    public func watermark() async throws -> IDWatermark {
        contents.withLock { c in
            IDWatermark(workout: c.workouts.maximumID ?? 0, share: c.shares.maximumID ?? 0)
        }
    }

    public func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot {
        contents.withLock { c in
            var snapshot = c.sessions[device]?.snapshot ?? DeviceSnapshot()
            snapshot.pendingShares = c.pendingByDevice[device] ?? 0
            return snapshot
        }
    }

    public func pendingShareCount(device: DeviceIdentity) async throws -> Int {
        contents.withLock { $0.pendingByDevice[device] ?? 0 }
    }

    public func commit(_ batch: StoreBatch) async throws {
        commitImmediately(batch)
    }

    public func commitImmediately(_ batch: StoreBatch) {
        contents.withLock { c in
            for workout in batch.workouts { c.workouts.upsert(workout) }
            for share in batch.shares {
                c.shares.upsert(share)
                if share.status == .pending {
                    c.pendingShares.insert(share.id)
                    c.pendingByDevice[share.device, default: 0] += 1
                } else {
                    c.pendingShares.remove(share.id)
                }
            }
            c.sessions[batch.device, default: StoredSession()].apply(batch)
        }
    }

    public func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord] {
        let all = contents.withLock { c in
            c.workouts.records.reversed().filter { device == nil || $0.device == device }
        }
        return limit.map { Array(all.prefix($0)) } ?? all
    }

    public func shares(limit: Int?) async throws -> [ShareRecord] {
        let all = contents.withLock { Array($0.shares.records.reversed()) }
        return limit.map { Array(all.prefix($0)) } ?? all
    }

    public func workout(id: Int64) async throws -> WorkoutRecord? {
        contents.withLock { $0.workouts[id] }
    }

    public func workouts(ids: [Int64]) async throws -> [Int64: WorkoutRecord] {
        contents.withLock { c in
            var found: [Int64: WorkoutRecord] = [:]
            for id in ids { found[id] = c.workouts[id] }
            return found
        }
    }

    public func dueShares(now: Date, limit: Int) async throws -> [ShareRecord] {
        contents.withLock { c in
            var due: [ShareRecord] = []
            c.pendingShares.forEachInOrder { id in
                if let share = c.shares[id], share.nextAttemptAt <= now { due.append(share) }
                return due.count < limit
            }
            return due
        }
    }

    public func recordDelivery(shareID: Int64, result: DeliveryResult) async throws {
        try await recordDeliveries([(shareID, result)])
    }

    public func recordDeliveries(_ results: [(shareID: Int64, result: DeliveryResult)]) async throws {
        contents.withLock { c in
            for (shareID, result) in results {
                guard let device = c.shares[shareID]?.device, c.shares[shareID]?.status == .pending else { continue }
                c.shares.update(id: shareID) { share in
                    share.attempts += 1
                    switch result {
                    case .delivered(let at):
                        share.status = .delivered
                        share.deliveredAt = at
                        share.lastError = nil
                    case .failed(let error, let retryAt):
                        share.lastError = error
                        share.nextAttemptAt = retryAt
                    }
                }
                if case .delivered = result {
                    c.pendingShares.remove(shareID)
                    c.pendingByDevice[device, default: 1] -= 1
                }
            }
        }
    }

    public func activeSessionCount() async throws -> Int {
        contents.withLock { $0.sessions.values.filter { $0.state.activeWorkout != nil }.count }
    }

    public func activeWorkouts() async throws -> [WorkoutRecord] {
        contents.withLock { c in
            c.sessions.values.compactMap(\.state.activeWorkout).sorted { $0.id > $1.id }
        }
    }

    public func pendingShareCount() async throws -> Int {
        contents.withLock { $0.pendingShares.count }
    }

    public func deviceNames() async throws -> [DeviceIdentity: String] {
        contents.withLock { $0.deviceNames }
    }

    public func setDeviceName(_ name: String?, for device: DeviceIdentity) async throws {
        contents.withLock { $0.deviceNames[device] = name }
    }
}

/// A device's session as stored: its remembered replies kept as a log, not a dictionary.
///
/// The session itself holds the dictionary it looks retries up in; the store only needs them again when
/// a session is restored, so a commit appends to the log instead of hashing every reply a second time.
private struct StoredSession {
    var state: SessionState = .idle
    var lastEndedWorkoutID: Int64?
    private var replies: [RecentReply] = []

    mutating func apply(_ batch: StoreBatch) {
        state = batch.state
        if let ended = batch.workouts.last(where: { $0.endedAt != nil }) { lastEndedWorkoutID = ended.id }
        replies.append(contentsOf: batch.replies)
        // Trimmed in steps, so the log is at most twice the window and a commit rarely moves it.
        if replies.count > 2 * RecentReplies.defaultCapacity {
            replies.removeFirst(replies.count - RecentReplies.defaultCapacity)
        }
    }

    /// An id is logged only when it ran, which it does only when not remembered.
    ///
    /// So replaying the log into a window evicts exactly what the session's own window evicted.
    var snapshot: DeviceSnapshot {
        DeviceSnapshot(
            state: state,
            lastEndedWorkoutID: lastEndedWorkoutID,
            recentReplies: RecentReplies(replies.suffix(RecentReplies.defaultCapacity).map { ($0.id, $0.reply) })
        )
    }
}

/// Pending share ids in ascending order, with removal in O(1) and no re-sorting.
///
/// Ids are allocated in increasing order, so an insert is almost always an append, which hashes nothing: it
/// runs in every commit of a device's batch. A removal (a delivery, off the devices' path) is noted in
/// `removed` and the id stays in `order` until the scan reaches it or the queue compacts, once half of it
/// is removed.
private struct PendingQueue {
    private var order: [Int64] = []
    private var head = 0
    /// Ids in `order[head...]` that are no longer pending.
    private var removed: Set<Int64> = []

    var count: Int { order.count - head - removed.count }

    mutating func insert(_ id: Int64) {
        if order.count == head || order[order.count - 1] < id {
            order.append(id)
            return
        }
        let index = order[head...].partitioningIndex { $0 >= id }
        if index < order.count, order[index] == id {
            removed.remove(id)
        } else {
            order.insert(id, at: index)
        }
    }

    mutating func remove(_ id: Int64) {
        let index = order[head...].partitioningIndex { $0 >= id }
        guard index < order.count, order[index] == id, removed.insert(id).inserted else { return }
        if removed.count > 64 && removed.count > (order.count - head) / 2 {
            order = order[head...].filter { !removed.contains($0) }
            head = 0
            removed = []
        }
    }

    /// Calls `body` with each pending id, lowest first, until it returns false.
    mutating func forEachInOrder(_ body: (Int64) -> Bool) {
        while head < order.count, removed.remove(order[head]) != nil { head += 1 }
        // The delivered front is dropped once it is most of the array, so the queue does not keep every id.
        if head > 64 && head > order.count / 2 {
            order.removeFirst(head)
            head = 0
        }
        for id in order[head...] where !removed.contains(id) {
            guard body(id) else { return }
        }
    }
}

extension ArraySlice<Int64> {
    /// The first index whose element satisfies `predicate`, which must be false then true along the slice.
    fileprivate func partitioningIndex(where predicate: (Int64) -> Bool) -> Index {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
