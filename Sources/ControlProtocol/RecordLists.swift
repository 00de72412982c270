import WorkoutProtocol

/// The `workouts` result: newest first, as the store lists them.
public struct WorkoutList: Codable, Hashable, Sendable {
    public var workouts: [WorkoutRecord]
    public init(workouts: [WorkoutRecord]) { self.workouts = workouts }
}

/// The `shares` result.
public struct ShareList: Codable, Hashable, Sendable {
    public var shares: [ShareRecord]
    public init(shares: [ShareRecord]) { self.shares = shares }
}
