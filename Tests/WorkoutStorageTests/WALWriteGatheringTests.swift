import CWALWriteGathering
import Foundation
import GRDB
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// `CWALWriteGathering`: the store's commits hand their WAL frames to the file system as one write.
///
/// SQLite's own VFS writes a WAL frame as two writes, its header and its page. What must hold besides: every
/// committed frame is in the file before another connection can see the commit, whether or not it synced.
@Suite struct WALWriteGatheringTests {
    @Test func aSingleFlightCommitsFramesReachTheFileInOneWrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, session) = try await Self.wearable(in: directory)
        let walPath = directory.databasePath + "-wal"
        // The device's first commit lays out its reply ring, over a hundred KiB written in 64 KiB runs: once.
        #expect(await session.handle([DecodedLines.end(0)]).first?.errorCode == .noActiveWorkout)
        for id in stride(from: Int64(1), through: 40, by: 2) {
            for line in [DecodedLines.start(id), DecodedLines.end(id + 1)] {
                let framesBefore = try WALFrames(path: walPath).commits.joined().count
                let before = try await Self.writeCounts(store)
                #expect(await session.handle([line]).first?.isSuccess == true)
                let after = try await Self.writeCounts(store)
                let frames = try WALFrames(path: walPath).commits.joined().count - framesBefore
                // A checkpoint restarts the log now and then: those commits are not counted here.
                guard frames > 0 else { continue }
                #expect(after.asked - before.asked >= 2 * frames, "SQLite asked for a header and a page per frame")
                #expect(after.issued - before.issued == 1, "\(frames) frames issued as one write")
            }
        }
        try store.close()
    }

    @Test func aLargeBatchIsIssuedIn64KiBWritesAndReadsBackWhole() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (store, session) = try await Self.wearable(in: directory)
        var lines: [DecodedLine] = []
        for id in stride(from: Int64(1), through: 1_000, by: 2) {
            lines += [DecodedLines.start(id), DecodedLines.end(id + 1)]
        }
        let before = try await Self.writeCounts(store)
        let replies = await session.handle(lines)
        #expect(replies.allSatisfy { $0.isSuccess })
        let after = try await Self.writeCounts(store)
        let walBytes =
            try WALFrames(path: directory.databasePath + "-wal").commits.joined().count
            * (SQLiteWorkoutStore.pageSize + 24)
        // Runs longer than SQLite's unix VFS takes in one call (128 KiB) are split, never cut short.
        #expect(after.issued - before.issued <= walBytes / 65_536 + 2)
        #expect(after.asked - before.asked > 10 * (after.issued - before.issued))
        // Read back by another connection (the pool's readers see only what is in the file).
        let stored = try await store.workouts(device: nil, limit: nil)
        #expect(stored.count == 500)
        #expect(stored.allSatisfy { $0.endedAt != nil })
        try store.close()
    }

    /// With synchronous = NORMAL a commit does not sync the WAL, yet its frames must be in the file.
    ///
    /// NORMAL is GRDB's default for a pool, not the store's. The frames must be there before the WAL index names them,
    /// for a reader opened beside it.
    @Test func aReaderSeesEveryUnsyncedCommitAtOnce() throws {
        _ = SQLiteWorkoutStore.walWriteGathering
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/normal.sqlite"
        let writer = try DatabaseQueue(path: path)
        try writer.writeWithoutTransaction { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            #expect(mode == "wal")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY, text TEXT)")
        }
        var readerConfiguration = Configuration()
        readerConfiguration.readonly = true
        let reader = try DatabaseQueue(path: path, configuration: readerConfiguration)
        for n in 1...50 {
            try writer.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [n, String(repeating: "x", count: 700)])
            }
            let (count, total) = try reader.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT sum(length(text)) FROM t") ?? -1
                )
            }
            #expect(count == n)
            #expect(total == n * 700)
        }
        let counts = writer.writeWithoutTransaction { db in Self.writeCounts(of: db) }
        #expect(counts.issued > 0 && counts.asked >= 2 * counts.issued)
    }

    /// A store in `directory` and one wearable's session on it.
    static func wearable(in directory: TemporaryDirectory) async throws -> (SQLiteWorkoutStore, DeviceSession) {
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store, clock: .system(assumeSynchronized: true))
        return (store, engine.session(for: "wearable-1"))
    }

    static func writeCounts(_ store: SQLiteWorkoutStore) async throws -> (asked: Int64, issued: Int64) {
        try await store.database.writeWithoutTransaction { db in writeCounts(of: db) }
    }

    /// The connection's WAL writes, asked and issued (``wd_wal_write_counts``).
    static func writeCounts(of db: Database) -> (asked: Int64, issued: Int64) {
        var asked: Int64 = 0
        var issued: Int64 = 0
        let rc = wd_wal_write_counts(UnsafeMutableRawPointer(db.sqliteConnection), &asked, &issued)
        #expect(rc == 0, "SQLITE_OK: the connection is opened through the gathering VFS")
        return (asked, issued)
    }
}
