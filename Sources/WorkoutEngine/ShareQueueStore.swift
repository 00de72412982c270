import Foundation
import WorkoutProtocol

/// What the share delivery worker needs from storage.
///
/// The due shares, the workouts they share, and a record of each attempt.
public protocol ShareQueueStore: Sendable {
    /// Pending shares whose next attempt is due at `now`, oldest first.
    func dueShares(now: Date, limit: Int) async throws -> [ShareRecord]
    /// When the earliest pending share is next due (nil when none is pending).
    ///
    /// What the delivery worker arms its timer for, instead of polling.
    func nextShareAttempt() async throws -> Date?
    /// The workouts with these ids that exist, by id: one read for a delivery pass.
    func workouts(ids: [Int64]) async throws -> [Int64: WorkoutRecord]
    /// Records an attempt: delivered, or failed with the error and the time of the next try.
    func recordDelivery(shareID: Int64, result: DeliveryResult) async throws
    /// Records several attempts at once, in one transaction where the store has them.
    func recordDeliveries(_ results: [(shareID: Int64, result: DeliveryResult)]) async throws
}

extension ShareQueueStore {
    public func recordDeliveries(_ results: [(shareID: Int64, result: DeliveryResult)]) async throws {
        for (shareID, result) in results { try await recordDelivery(shareID: shareID, result: result) }
    }

    public func nextShareAttempt() async throws -> Date? {
        try await dueShares(now: .distantFuture, limit: Int.max).map(\.nextAttemptAt).min()
    }
}

/// How one delivery attempt ended.
public enum DeliveryResult: Sendable, Hashable {
    case delivered(at: Date)
    case failed(error: String, retryAt: Date)
}
