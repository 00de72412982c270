import Foundation
import GRDB

/// The workoutd version that last opened the database for writing, kept in the database itself.
///
/// It is one row of `workoutdVersion`, so an older binary meeting it after a downgrade can say which version wrote it
/// and refuse to alter it (``StoreFileCheck``).
enum WriterVersion {
    static let tableName = "workoutdVersion"

    static func createTable(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE workoutdVersion (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    version TEXT NOT NULL,
                    writtenAt REAL NOT NULL
                )
                """
        )
    }

    /// Records `version` as the last writer (after the migrations, in their own transaction).
    static func record(_ version: String, in db: Database) throws {
        guard try read(db) != version else { return }
        try db.execute(
            sql: """
                INSERT INTO workoutdVersion (id, version, writtenAt) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET version = excluded.version, writtenAt = excluded.writtenAt
                """,
            arguments: [version, Date().timeIntervalSince1970]
        )
    }

    /// The recorded version, or nil before any version recorded one (or before the table existed).
    static func read(_ db: Database) throws -> String? {
        guard try db.tableExists(tableName) else { return nil }
        return try String.fetchOne(db, sql: "SELECT version FROM workoutdVersion WHERE id = 1")
    }

    /// Whether `version` is newer than `current`, comparing the dotted numbers before any `-` or `+`.
    ///
    /// So `0.10.0` > `0.9.1`; a version that does not parse is not newer (the schema check still applies).
    static func isNewer(_ version: String, than current: String) -> Bool {
        func numbers(_ text: String) -> [Int]? {
            let core = text.split(whereSeparator: { $0 == "-" || $0 == "+" }).first ?? ""
            let parts = core.split(separator: ".").map { Int($0) }
            guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return nil }
            return parts.compactMap { $0 }
        }
        guard let new = numbers(version), let old = numbers(current) else { return false }
        for index in 0..<max(new.count, old.count) {
            let a = index < new.count ? new[index] : 0
            let b = index < old.count ? old[index] : 0
            if a != b { return a > b }
        }
        return false
    }
}
