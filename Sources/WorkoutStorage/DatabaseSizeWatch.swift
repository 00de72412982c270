import CWALWriteGathering
import GRDB
import Synchronization

/// When a commit has to measure the pages in use against `storage.max_database_bytes`.
///
/// Measuring runs three pragmas that SQLite compiles anew on every run (it prepares a PRAGMA for one run
/// only), a large share of the SQL work of a lone command's commit. A commit adds at most one page per WAL frame,
/// and each frame is at least one WAL write the gathering VFS counts (``wd_wal_write_counts``). So while the
/// last measurement plus one page per WAL write since stays under the budget, so does the database, and
/// measuring again could not change ``SQLiteWorkoutStore/refusesNewWorkouts``: the commit skips it.
final class DatabaseSizeWatch: Sendable {
    private struct Measurement {
        var bytes: Int64
        var pageSize: Int64
        /// The writer connection's WAL writes when measured (nil: not counted, every commit measures).
        var walWrites: Int64?
    }

    private let last = Mutex<Measurement?>(nil)

    /// On the writer connection, after a commit.
    ///
    /// The bytes in use if they could have reached `budget` since the last measurement (measured now), otherwise `nil`,
    /// and also `nil` without a budget or when measuring failed.
    func bytesInUseIfNeeded(_ db: Database, budget: Int64) -> Int64? {
        guard budget > 0 else { return nil }
        let walWrites = Self.walWrites(db)
        if let walWrites, let last = last.withLock({ $0 }), let measuredAt = last.walWrites, walWrites >= measuredAt,
            last.bytes + (walWrites - measuredAt) * last.pageSize < budget
        {
            return nil
        }
        guard let (pages, pageSize) = try? SQLiteWorkoutStore.pagesInUse(db) else {
            forget()
            return nil
        }
        let bytes = pages * pageSize
        last.withLock { $0 = Measurement(bytes: bytes, pageSize: pageSize, walWrites: walWrites) }
        return bytes
    }

    /// The next commit measures (a measurement elsewhere, a reload's budget, a reopened file, pages freed).
    func forget() {
        last.withLock { $0 = nil }
    }

    /// The WAL writes SQLite asked of this connection's open WAL file.
    ///
    /// `nil` where the gathering VFS is not in use.
    private static func walWrites(_ db: Database) -> Int64? {
        var asked: Int64 = 0
        var issued: Int64 = 0
        guard wd_wal_write_counts(UnsafeMutableRawPointer(db.sqliteConnection), &asked, &issued) == 0 else {
            return nil
        }
        return asked
    }
}
