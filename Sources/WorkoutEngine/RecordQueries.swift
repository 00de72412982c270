import WorkoutProtocol

/// Read-only questions about what the store holds.
///
/// `workoutctl workouts/shares/status`, `workoutd workouts/shares` and the systemd status line.
public protocol RecordQueries: Sendable {
    /// Newest first, of one device or all; at most `limit` when given.
    func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord]
    /// Newest first, as `query` narrows them.
    ///
    /// A default in `WorkoutQuery.swift` filters ``workouts(device:limit:)``.
    func workouts(matching query: WorkoutQuery) async throws -> [WorkoutRecord]
    /// Newest first; at most `limit` when given.
    func shares(limit: Int?) async throws -> [ShareRecord]
    func workout(id: Int64) async throws -> WorkoutRecord?
    /// Sessions with an active workout, for status reporting.
    func activeSessionCount() async throws -> Int
    /// The workouts those sessions have active, newest first: what ``activeSessionCount()`` counts.
    func activeWorkouts() async throws -> [WorkoutRecord]
    /// Shares not yet delivered, whatever their next attempt time: the queue as a person thinks of it.
    func pendingShareCount() async throws -> Int
}

extension RecordQueries {
    /// For stores without a query of their own: every workout not ended yet.
    public func activeWorkouts() async throws -> [WorkoutRecord] {
        try await workouts(device: nil, limit: nil).filter { $0.endedAt == nil }
    }
}
