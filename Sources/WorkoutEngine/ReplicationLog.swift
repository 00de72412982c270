import Foundation
import WorkoutProtocol

/// One committed change waiting to be shipped to the central database, with the record as it is now.
///
/// The record holds what the central tables keep: no command ids, and a share's delivery state as when queued.
///
/// A workout that started and ended before it was shipped appears once, in its ended state: the central
/// row only ever moves forward, so shipping the newest state is the same as shipping every step.
public struct ReplicationChange: Sendable, Hashable {
    public enum Record: Sendable, Hashable {
        case workout(WorkoutRecord)
        case share(ShareRecord)
    }

    /// Position in the store's commit order; shipping marks everything up to a sequence at once.
    public var sequence: Int64
    public var record: Record

    public init(sequence: Int64, record: Record) {
        self.sequence = sequence
        self.record = record
    }
}

/// The oldest unshipped changes, and the outbox position they reach.
public struct ReplicationBatch: Sendable, Hashable {
    public var changes: [ReplicationChange]
    /// The highest outbox sequence the batch covers; nil when nothing is pending.
    public var throughSequence: Int64?

    public init(changes: [ReplicationChange], throughSequence: Int64?) {
        self.changes = changes
        self.throughSequence = throughSequence
    }
}

/// The store's record of what must still be shipped, written in the same transaction as each commit.
///
/// So a crash can neither lose a change nor ship one the store rolled back.
public protocol ReplicationLog: Sendable {
    /// The oldest unshipped changes after `sequence`, in commit order, at most `limit` sequence numbers.
    ///
    /// With `sequence` nil, those after the shipped mark. The shipper reads past a batch still in flight this way.
    func pendingChanges(after sequence: Int64?, limit: Int) async throws -> ReplicationBatch
    /// Marks every change up to and including `sequence` as shipped at `date`.
    ///
    /// It is at once for what this log reports; it may be kept durably only later (with the next commit, or
    /// ``saveShippedMark()``), so a crash may ship those changes again, which the central upserts absorb.
    func markShipped(through sequence: Int64, at date: Date) async throws
    /// Writes the newest mark durably if nothing has yet; the shipper calls it when it has caught up.
    func saveShippedMark() async throws
    /// How many changes wait to be shipped.
    func pendingChangeCount() async throws -> Int
    /// Forgets shipped changes older than `date`, and the shipped workouts and shares no session refers to.
    ///
    /// Never touches anything unshipped. Returns the number of workouts removed.
    @discardableResult
    func pruneShipped(before date: Date) async throws -> Int
}

/// Wakes the shipper when a commit added changes; rings coalesce, so a burst of commits is one wake-up.
public final class ReplicationDoorbell: Sendable {
    public let rings: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() {
        (rings, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    public func ring() {
        continuation.yield()
    }
}
