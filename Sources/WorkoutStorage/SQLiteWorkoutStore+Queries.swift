import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// What the control socket, the page and the inspection commands read.
///
/// Workouts, shares, counts, integrity.
extension SQLiteWorkoutStore {
    public func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord] {
        try await reading { db in
            var request = WorkoutRow.order(Column("id").desc)
            if let device { request = request.filter(Column("device") == device.rawValue) }
            if let limit { request = request.limit(max(0, limit)) }
            var records = try request.fetchAll(db).map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            return records
        }
    }

    public func workouts(matching query: WorkoutQuery) async throws -> [WorkoutRecord] {
        try await reading { db in
            var request = WorkoutRow.order(Column("id").desc)
            if let device = query.device { request = request.filter(Column("device") == device.rawValue) }
            if let devices = query.devices {
                let named = devices.identities.map(\.rawValue).sorted()
                let listed = named.isEmpty ? "" : "device IN (\(named.map { _ in "?" }.joined(separator: ","))) OR "
                request = request.filter(
                    sql: "(\(listed)instr(lower(device), ?) > 0)",
                    arguments: StatementArguments(named + [devices.text])
                )
            }
            if query.activeOnly { request = request.filter(sql: Self.activeWorkoutIDsSQL) }
            if let from = query.startedFrom {
                request = request.filter(Column("startedAt") >= from.timeIntervalSince1970)
            }
            if let before = query.startedBefore {
                request = request.filter(Column("startedAt") < before.timeIntervalSince1970)
            }
            if let id = query.beforeID { request = request.filter(Column("id") < id) }
            if let limit = query.limit { request = request.limit(max(0, limit)) }
            var records = try request.fetchAll(db).map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            return records
        }
    }

    public func shares(limit: Int?) async throws -> [ShareRecord] {
        try await reading { db in
            var request = ShareRow.order(Column("id").desc)
            if let limit { request = request.limit(max(0, limit)) }
            return try request.fetchAll(db).map { try $0.record() }
        }
    }

    public func workout(id: Int64) async throws -> WorkoutRecord? {
        try await reading { db in
            var records = try WorkoutRow.fetchOne(db, key: id).map { [try $0.record()] } ?? []
            try WorkoutClockRow.attach(to: &records, in: db)
            return records.first
        }
    }

    public func workouts(ids: [Int64]) async throws -> [Int64: WorkoutRecord] {
        try await reading { db in
            var found: [Int64: WorkoutRecord] = [:]
            var records = try WorkoutRow.fetchAll(db, keys: ids).map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            for record in records { found[record.id] = record }
            return found
        }
    }

    public func activeWorkouts() async throws -> [WorkoutRecord] {
        try await reading { db in
            var records = try WorkoutRow.filter(sql: Self.activeWorkoutIDsSQL).order(Column("id").desc).fetchAll(db)
                .map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            return records
        }
    }

    /// The workouts the devices' sessions hold active (each session's newest reply-ring slot says which).
    static let activeWorkoutIDsSQL =
        "id IN (SELECT activeWorkoutID FROM (\(ReplyRing.sessionsSQL)) WHERE activeWorkoutID IS NOT NULL)"

    public func activeSessionCount() async throws -> Int {
        try await reading { db in
            try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM (\(ReplyRing.sessionsSQL)) WHERE activeWorkoutID IS NOT NULL"
            ) ?? 0
        }
    }

    public func pendingShareCount() async throws -> Int {
        try await reading { db in
            try ShareRow.filter(sql: ShareRow.isPendingSQL).fetchCount(db)
        }
    }

    /// SQLite's `quick_check` over the whole database.
    ///
    /// `[]` when it is sound, otherwise the first problems SQLite names. Reads every page, so on a large database on an
    /// SD card it takes seconds; it runs on a reader connection (WAL), so commits go on meanwhile.
    public func checkIntegrity() async throws -> [String] {
        let check: [String]
        do {
            check = try await database.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(10)") }
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
        {
            // Damage bad enough that the check itself stops on it (a page that is not a B-tree page).
            return [Self.describe(error)]
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
        return check == ["ok"] ? [] : check
    }
}
