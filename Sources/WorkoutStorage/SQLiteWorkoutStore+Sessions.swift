import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// Where a device's session comes from: the id watermark and a device's stored state.
extension SQLiteWorkoutStore {
    public func watermark() async throws -> IDWatermark {
        try await reading { db in
            IDWatermark(
                workout: try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM workout") ?? 0,
                share: try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM share") ?? 0
            )
        }
    }

    public func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot {
        let window = replyWindow
        return try await reading { db in
            let stored = try ReplyRing.stored(device: device.rawValue, in: db)
            // The active workout is the row its start wrote (ends and starts commit it with the session), with its
            // clock mark (and boot readings) from `workoutClock`, as every other read has it. The last ended one
            // stays an id: a share reads it from the store then, with the times ClockCorrection may have changed.
            var records =
                try stored.activeWorkoutID.flatMap { try WorkoutRow.fetchOne(db, key: $0) }.map { [try $0.record()] }
                ?? []
            try WorkoutClockRow.attach(to: &records, in: db)
            var active = records.first
            // An unmarked workout's boot reading is only in the slot.
            if active?.startedBoot == nil { active?.startedBoot = stored.activeStartedBoot }
            return DeviceSnapshot(
                state: active.map { .active($0) } ?? .idle,
                lastEndedWorkoutID: stored.lastEndedWorkoutID,
                recentReplies: RecentReplies(stored.entries, capacity: window),
                pendingShares: try Self.pendingShares(of: device, in: db)
            )
        }
    }

    public func pendingShareCount(device: DeviceIdentity) async throws -> Int {
        try await reading { db in try Self.pendingShares(of: device, in: db) }
    }

    /// Through the `share_pending` index: only pending shares are looked at.
    static func pendingShares(of device: DeviceIdentity, in db: Database) throws -> Int {
        try ShareRow.filter(sql: ShareRow.isPendingSQL).filter(Column("device") == device.rawValue).fetchCount(db)
    }
}
