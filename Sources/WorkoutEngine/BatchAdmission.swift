/// The limits one batch runs under, decided by its session before the pure ``SessionMachine`` runs it.
public struct BatchAdmission: Sendable, Hashable {
    /// Lines from this index on are over the device's rate limit.
    ///
    /// Answered `rate_limited`, run and stored nothing.
    public var admitted: Int
    /// What the `rate_limited` replies tell the device to wait.
    public var retryAfterMilliseconds: Int64
    /// The database is over its budget: `start_workout` is answered `storage_full`.
    public var refusesNewWorkouts: Bool
    /// Undelivered shares the device may have.
    ///
    /// `share_workout` beyond is `too_many_pending_shares` (0 = no limit).
    public var pendingShareLimit: Int

    public init(
        admitted: Int = .max,
        retryAfterMilliseconds: Int64 = 0,
        refusesNewWorkouts: Bool = false,
        pendingShareLimit: Int = 0
    ) {
        self.admitted = admitted
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.refusesNewWorkouts = refusesNewWorkouts
        self.pendingShareLimit = pendingShareLimit
    }

    /// Everything admitted, nothing limited.
    public static let unlimited = BatchAdmission()
}
