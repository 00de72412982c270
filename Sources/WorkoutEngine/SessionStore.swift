import Foundation
import WorkoutProtocol

/// What a device's session looked like when last committed; restored when the device (re)appears.
public struct DeviceSnapshot: Sendable, Hashable {
    public var state: SessionState
    /// The id of the most recently ended workout: what `share_workout` shares. Only the id: the workout's times
    /// live in the store alone, which corrects them once the clock is synchronised (a copy held here would go
    /// on showing the uncorrected ones); a share is delivered with the workout as the store has it then.
    public var lastEndedWorkoutID: Int64?
    public var recentReplies: RecentReplies
    /// Shares of this device not yet delivered (as restored, plus those queued since).
    ///
    /// An upper bound, since deliveries lower it in the store only; the session reads the store's count again near the
    /// limit.
    public var pendingShares: Int

    public init(
        state: SessionState = .idle,
        lastEndedWorkoutID: Int64? = nil,
        recentReplies: RecentReplies = RecentReplies(),
        pendingShares: Int = 0
    ) {
        self.state = state
        self.lastEndedWorkoutID = lastEndedWorkoutID
        self.recentReplies = recentReplies
        self.pendingShares = pendingShares
    }
}

/// Everything one batch of commands changed on one device, committed atomically.
///
/// The replies to the batch are written to the device only after ``SessionStore/commit(_:)`` returns,
/// so an `ok` always describes something already durable.
public struct StoreBatch: Sendable, Hashable {
    public var device: DeviceIdentity
    /// The session state after the batch.
    public var state: SessionState
    /// Workouts created or updated (started, ended), in order.
    public var workouts: [WorkoutRecord] = []
    /// Shares newly queued for delivery.
    public var shares: [ShareRecord] = []
    /// Replies to remember for idempotent retries, oldest first.
    public var replies: [RecentReply] = []

    public init(device: DeviceIdentity, state: SessionState) {
        self.device = device
        self.state = state
    }

    public var isEmpty: Bool { workouts.isEmpty && shares.isEmpty && replies.isEmpty }
}

/// A reply remembered under the command id it answered.
public struct RecentReply: Sendable, Hashable {
    public var id: CommandID
    public var reply: Reply

    public init(id: CommandID, reply: Reply) {
        self.id = id
        self.reply = reply
    }
}

/// The highest ids in use, so new ones never collide with stored ones after a restart.
public struct IDWatermark: Sendable, Hashable {
    public var workout: Int64
    public var share: Int64

    public init(workout: Int64 = 0, share: Int64 = 0) {
        self.workout = workout
        self.share = share
    }
}

/// What a device's session needs from storage.
///
/// The id watermark at start, its snapshot when it (re)appears, and an atomic commit per batch.
///
/// Implementations must make ``commit(_:)`` atomic: all of a batch or none of it.
public protocol SessionStore: Sendable {
    func watermark() async throws -> IDWatermark
    func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot
    func commit(_ batch: StoreBatch) async throws
    /// The device's shares not yet delivered, counted now (`limits.pending_shares_per_device`).
    func pendingShareCount(device: DeviceIdentity) async throws -> Int
    /// Whether the store is over its size budget (`storage.max_database_bytes`): new workouts are refused.
    /// Read once per batch: it must be cheap (a flag the store keeps, not a measurement).
    var refusesNewWorkouts: Bool { get }
}

extension SessionStore {
    /// Through a restore, for stores that keep no cheaper count.
    public func pendingShareCount(device: DeviceIdentity) async throws -> Int {
        try await restore(device).pendingShares
    }

    /// A store without a size budget.
    public var refusesNewWorkouts: Bool { false }
}

/// A store that can commit on the calling thread.
///
/// A store in memory, or a durable store whose writer is idle.
///
/// A session on such a store runs a batch without suspending, so a device's read, its commands and its
/// replies stay in one turn of the device's event loop: no task, no promise, no second wake-up, no hop to a
/// writer thread and back (for a lone durable command those were a tenth of its round trip; see
/// docs/decisions/0001-durable-path.md).
public protocol ImmediatelyCommittingStore: SessionStore {
    /// Commits `batch` atomically before returning; same contract as ``SessionStore/commit(_:)``.
    func commitImmediately(_ batch: StoreBatch) throws
    /// Whether ``commitImmediately(_:)`` waits for the disk (a sync). A session then commits in place only a
    /// batch with nothing read behind it, while ``writerIsIdle``: a device in single flight waits for that sync
    /// anyway, while a pipelining device's next batch steps meanwhile on the awaited path.
    var immediateCommitWaitsForDisk: Bool { get }
    /// Whether no other write is queued or running, which ``commitImmediately(_:)`` would wait for.
    var writerIsIdle: Bool { get }
}

extension ImmediatelyCommittingStore {
    /// A store in memory: its commits wait for nothing.
    public var immediateCommitWaitsForDisk: Bool { false }
    public var writerIsIdle: Bool { true }
}

/// A store that runs its commits one at a time in the order they were queued (SQLite's single writer).
///
/// It can be handed the next one by the thread that finished the one before (``CommitPipeline``).
public protocol QueueingCommitStore: SessionStore {
    /// Queues `batch`'s commit behind every commit queued before it and returns at once.
    ///
    /// `completion` gets the outcome, on the store's thread, once the commit is durable or failed
    /// (``SessionStore/commit(_:)``'s contract).
    func enqueueCommit(_ batch: StoreBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
}

/// Durable home of sessions, workouts, shares and remembered replies.
///
/// The three faces one store offers to its three users (the sessions, the share delivery worker, read-only queries).
public typealias WorkoutStore = SessionStore & ShareQueueStore & RecordQueries

/// Raised by a store that cannot read or write right now (read-only, full disk, locked).
public struct StorageUnavailableError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { "storage unavailable: \(reason)" }
}
