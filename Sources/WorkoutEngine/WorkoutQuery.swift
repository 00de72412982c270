import Foundation
import WorkoutProtocol

/// Which workouts to list, newest first.
///
/// One page of the HTTP API's `/api/workouts` or `workoutctl workouts`.
public struct WorkoutQuery: Hashable, Sendable {
    /// One device's, or every device's when nil.
    public var device: DeviceIdentity?
    /// The devices a part of a name, serial or node picked (the page's filter); every device's when nil.
    public var devices: DeviceMatch?
    /// Only the workouts their sessions have active (not ended yet).
    public var activeOnly = false
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
        limit: Int? = nil,
        devices: DeviceMatch? = nil,
        activeOnly: Bool = false
    ) {
        self.device = device
        self.devices = devices
        self.activeOnly = activeOnly
        self.startedFrom = startedFrom
        self.startedBefore = startedBefore
        self.beforeID = beforeID
        self.limit = limit
    }

    /// Whether `record` belongs to the result, the limit aside.
    public func matches(_ record: WorkoutRecord) -> Bool {
        if let device, record.device != device { return false }
        if let devices, !devices.matches(record.device) { return false }
        if activeOnly, record.endedAt != nil { return false }
        if let startedFrom, record.startedAt < startedFrom { return false }
        if let startedBefore, record.startedAt >= startedBefore { return false }
        if let beforeID, record.id >= beforeID { return false }
        return true
    }
}

/// Devices picked by a part of what names them.
///
/// An identity that contains ``text`` (ASCII letters in any case), or one of ``identities`` (the devices whose node or
/// name contained it, found by the caller).
public struct DeviceMatch: Hashable, Sendable {
    /// What was asked for, with ASCII letters in lower case.
    public var text: String
    public var identities: Set<DeviceIdentity>

    public init(text: String, identities: Set<DeviceIdentity> = []) {
        self.text = Self.folded(text)
        self.identities = identities
    }

    public func matches(_ device: DeviceIdentity) -> Bool {
        identities.contains(device) || Self.folded(device.rawValue).contains(text)
    }

    /// ASCII letters in lower case and nothing else changed.
    ///
    /// What SQLite's `lower()` does, so a query in SQL and one in memory pick the same devices.
    public static func folded(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { (65...90).contains($0.value) ? Unicode.Scalar($0.value + 32) ?? $0 : $0 }
            )
        )
    }
}

extension RecordQueries {
    /// For stores without a query of their own (the in-memory one).
    ///
    /// Every workout of the device, filtered here.
    public func workouts(matching query: WorkoutQuery) async throws -> [WorkoutRecord] {
        let candidates =
            query.activeOnly ? try await activeWorkouts() : try await workouts(device: query.device, limit: nil)
        let matching = candidates.filter(query.matches)
        return query.limit.map { Array(matching.prefix(max(0, $0))) } ?? matching
    }
}
