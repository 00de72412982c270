import Foundation
import WorkoutProtocol

/// Which workouts to list, newest first.
///
/// One page of the HTTP API's `/api/workouts` or `workoutctl workouts`.
public struct WorkoutQuery: Hashable, Sendable {
    /// One device's, or every device's when nil.
    public var device: DeviceIdentity?
    /// Started at or after this time.
    public var startedFrom: Date?
    /// Started before this time.
    public var startedBefore: Date?
    /// Only ids below this one: the page after the one that ended there.
    ///
    /// Ids only grow, so pages never overlap.
    public var beforeID: Int64?
    /// At most this many; all when nil.
    public var limit: Int?

    public init(
        device: DeviceIdentity? = nil,
        startedFrom: Date? = nil,
        startedBefore: Date? = nil,
        beforeID: Int64? = nil,
        limit: Int? = nil
    ) {
        self.device = device
        self.startedFrom = startedFrom
        self.startedBefore = startedBefore
        self.beforeID = beforeID
        self.limit = limit
    }

    /// Whether `record` belongs to the result, the limit aside.
    public func matches(_ record: WorkoutRecord) -> Bool {
        if let device, record.device != device { return false }
        if let startedFrom, record.startedAt < startedFrom { return false }
        if let startedBefore, record.startedAt >= startedBefore { return false }
        if let beforeID, record.id >= beforeID { return false }
        return true
    }
}

extension RecordQueries {
    /// For stores without a query of their own (the in-memory one).
    ///
    /// Every workout of the device, filtered here.
    public func workouts(matching query: WorkoutQuery) async throws -> [WorkoutRecord] {
        let matching = try await workouts(device: query.device, limit: nil).filter(query.matches)
        return query.limit.map { Array(matching.prefix(max(0, $0))) } ?? matching
    }
}
