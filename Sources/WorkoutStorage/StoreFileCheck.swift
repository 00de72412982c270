import Foundation
import GRDB

/// Decides, without writing a byte, whether an existing file is a workoutd database we may open.
///
/// Runs before the pool opens, because opening a pool switches the file to WAL mode and migrating
/// adds tables: both would change a file that belongs to someone else. The header, application id and
/// schema checks read a few pages; SQLite's `quick_check` reads the whole file, so it runs here only with
/// `fullCheck` (a small file) and otherwise after start-up (``SQLiteWorkoutStore/checkIntegrity()``).
enum StoreFileCheck {
    /// With `softwareVersion`, a database whose recorded last writer is newer is refused too.
    ///
    /// The last writer is ``WriterVersion``.
    static func verify(path: String, fullCheck: Bool = true, softwareVersion: String? = nil) throws {
        let header = try readHeader(path: path)
        // An empty file is what SQLite itself creates before the first write: treat it as new.
        if header.isEmpty { return }
        guard header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw StorageOpenError(
                kind: .notADatabase,
                path: path,
                detail:
                    "the file is not an SQLite database; move it aside or choose another --state-dir. It was not modified."
            )
        }

        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "workoutd-check"
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let tableCount = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
                guard applicationID == StoreSchema.applicationID || (applicationID == 0 && tableCount == 0) else {
                    throw StorageOpenError(
                        kind: .foreignDatabase,
                        path: path,
                        detail:
                            "the file is an SQLite database of another program (application_id \(applicationID), \(tableCount) schema objects); move it aside or choose another --state-dir. It was not modified."
                    )
                }
                let writer = try WriterVersion.read(db)
                let newerWriter =
                    softwareVersion.map { own in writer.map { WriterVersion.isNewer($0, than: own) } ?? false } ?? false
                if try StoreSchema.migrator.hasBeenSuperseded(db) || newerWriter {
                    let named = writer.map { "workoutd \($0)" } ?? "a newer workoutd"
                    let own = softwareVersion.map { " (this is \($0))" } ?? ""
                    throw StorageOpenError(
                        kind: .newerSchema,
                        path: path,
                        detail:
                            "the database was written by \(named), newer than this version\(own); run that version or newer (a downgrade cannot read it). It was not modified."
                    )
                }
                guard fullCheck else { return }
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard check == ["ok"] else {
                    throw StorageOpenError(
                        kind: .corrupt,
                        path: path,
                        detail:
                            "the database fails SQLite's integrity check (\(check.prefix(3).joined(separator: "; "))); restore it from a backup or move it aside. It was not modified."
                    )
                }
            }
        } catch let error as StorageOpenError {
            throw error
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
        {
            throw StorageOpenError(
                kind: .corrupt,
                path: path,
                detail:
                    "SQLite reports the file as damaged (\(SQLiteWorkoutStore.describe(error))); restore it from a backup or move it aside. It was not modified."
            )
        } catch {
            throw StorageOpenError(
                kind: .cannotOpen,
                path: path,
                detail: "SQLite could not read it (\(SQLiteWorkoutStore.describe(error)))."
            )
        }
    }

    /// The first 100 bytes: SQLite's file header.
    private static func readHeader(path: String) throws -> [UInt8] {
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            return Array(try handle.read(upToCount: 100) ?? Data())
        } catch {
            throw StorageOpenError(
                kind: .cannotOpen,
                path: path,
                detail: "the file could not be read (\(error.localizedDescription))."
            )
        }
    }
}
