import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// The share queue as the delivery worker sees it: what is due, when next, and each delivery's outcome.
extension SQLiteWorkoutStore {
    public func dueShares(now: Date, limit: Int) async throws -> [ShareRecord] {
        try await reading { db in
            try ShareRow
                .filter(sql: ShareRow.isPendingSQL).filter(Column("nextAttemptAt") <= now.timeIntervalSince1970)
                .order(Column("id"))
                .limit(max(0, limit))
                .fetchAll(db)
                .map { try $0.record() }
        }
    }

    /// One lookup in the `share_pending` index (nextAttemptAt of pending shares).
    public func nextShareAttempt() async throws -> Date? {
        try await reading { db in
            try Double.fetchOne(
                db,
                sql: "SELECT MIN(nextAttemptAt) FROM share WHERE \(ShareRow.isPendingSQL)"
            ).map { Date(timeIntervalSince1970: $0) }
        }
    }

    public func recordDelivery(shareID: Int64, result: DeliveryResult) async throws {
        try await recordDeliveries([(shareID, result)])
    }

    /// One transaction (one fsync) for a pass of the delivery worker.
    ///
    /// So deliveries cost the devices' commits little of the single writer.
    public func recordDeliveries(_ results: [(shareID: Int64, result: DeliveryResult)]) async throws {
        guard !results.isEmpty else { return }
        try await writing { db in
            // Only a pending share changes: a second report of the same delivery is a no-op.
            let delivered = try db.cachedStatement(
                sql: """
                    UPDATE share SET status = 'delivered', attempts = attempts + 1, deliveredAt = ?, lastError = NULL
                    WHERE id = ? AND status = 'pending'
                    """
            )
            let failed = try db.cachedStatement(
                sql: """
                    UPDATE share SET attempts = attempts + 1, lastError = ?, nextAttemptAt = ?
                    WHERE id = ? AND status = 'pending'
                    """
            )
            for (shareID, result) in results {
                switch result {
                case .delivered(let at):
                    try delivered.execute(arguments: [at.timeIntervalSince1970, shareID])
                case .failed(let error, let retryAt):
                    try failed.execute(arguments: [error, retryAt.timeIntervalSince1970, shareID])
                }
            }
        }
    }
}
