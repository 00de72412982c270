import Foundation
import GRDB
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

/// What one acknowledged command costs the disk: the WAL frames (pages) its commit writes.
///
/// Each frame is synced before the ack. Counted from the WAL's frame headers on the real store, driven by the
/// engine as a device drives it, from an empty database and from one holding 200,000 workouts.
@Suite struct CommitPagesTests {
    /// Start, end and share commands of one wearable in single flight (one batch, one commit each).
    static let cycles = 40

    @Test func aCommandChangesAtMostThreePagesInAnEmptyDatabase() async throws {
        try await expectFewPages(storedWorkouts: 0)
    }

    @Test func aCommandChangesAtMostThreePagesBeside200000Workouts() async throws {
        try await expectFewPages(storedWorkouts: 200_000)
    }

    /// With replication on, a commit also appends its outbox entries.
    ///
    /// One page more (the outbox's right edge).
    @Test func aReplicatedCommandAddsOnlyItsOutboxPage() async throws {
        try await expectFewPages(storedWorkouts: 20_000, replicated: true)
    }

    private func expectFewPages(storedWorkouts: Int, replicated: Bool = false) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(
            stateDirectory: directory.path,
            replicationDoorbell: replicated ? ReplicationDoorbell() : nil
        )
        let allowed = replicated ? 4 : 3
        try await Self.fill(store, workouts: storedWorkouts)
        let pages = try await Self.pagesPerCommit(store, walPath: directory.databasePath + "-wal")
        for (command, commits) in pages.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let counts = commits.map(\.pages.count)
            print(
                "\(storedWorkouts) stored workouts\(replicated ? ", replicated" : ""), \(command.rawValue): \(counts.reduce(0, +)) pages in \(counts.count) commits, at most \(counts.max() ?? 0)"
            )
            for commit in commits where Self.ownPages(commit) > allowed {
                // Which table each page belongs to, for the failure's message (dbstat, where SQLite has it).
                let tables = try? await store.database.read { db in
                    try commit.pages.map {
                        try String.fetchOne(
                            db,
                            sql: "SELECT name || ' ' || pagetype FROM dbstat WHERE pageno = ?",
                            arguments: [$0]
                        ) ?? "?"
                    }
                }
                Issue.record(
                    "\(command.rawValue) wrote pages \(commit.pages) (\(tables ?? [])), the database having \(commit.sizeBefore) before"
                )
            }
        }
        try store.close()
    }

    /// One commit: the pages it wrote, and the database's size in pages before it.
    struct Commit {
        var pages: [UInt32]
        var sizeBefore: UInt32
    }

    /// The pages a command itself wrote: those its commit changed, less those a growing B-tree adds.
    ///
    /// A B-tree grows by a page now and then: the new page past the old end of the file, the parent that gains its
    /// divider, and page 1, whose header counts the pages.
    static func ownPages(_ commit: Commit) -> Int {
        let added = commit.pages.filter { $0 > commit.sizeBefore }.count
        guard added > 0 else { return commit.pages.count }
        return commit.pages.count - 2 * added - (commit.pages.contains(1) ? 1 : 0)
    }

    /// `workouts` ended workouts of 50 other wearables, with a share for every tenth.
    ///
    /// They are written in one transaction, then checkpointed: the WAL starts empty.
    static func fill(_ store: SQLiteWorkoutStore, workouts: Int) async throws {
        guard workouts > 0 else { return }
        try await store.database.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO workout (id, device, location, date, intensityLevel, startedAt, endedAt, startCommandID, endCommandID)
                    SELECT i, 'wearable-' || (i % 50 + 100), 'Gary''s Gym', 1584387913.0, 5, 1700000000.5 + i, 1700001800.5 + i, i * 2, i * 2 + 1 FROM n
                    """,
                arguments: [workouts]
            )
            try db.execute(
                sql: """
                    INSERT INTO share (id, workoutID, device, service, queuedAt, status, attempts, nextAttemptAt, commandID)
                    SELECT id / 10, id, device, 'twitter', endedAt, 'delivered', 1, endedAt, NULL FROM workout WHERE id % 10 = 0
                    """
            )
        }
        try await store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// The pages of each command's commit, by command.
    static func pagesPerCommit(_ store: SQLiteWorkoutStore, walPath: String) async throws -> [CommandType: [Commit]] {
        // A synchronised clock (`clock.assume_synchronized: true`): otherwise, where the clock reads unsynchronised
        // (a container, a hub before NTP), every workout also writes its clock mark (`workoutClock`), a page more.
        let engine = try await WorkoutEngine(store: store, clock: .system(assumeSynchronized: true))
        let session = engine.session(for: "wearable-1")
        var pages: [CommandType: [Commit]] = [:]
        // The device's first commit lays out its reply ring (``ReplyRing/reserveSlots(number:window:in:)``): once.
        #expect(await session.handle([DecodedLines.end(0)]).first?.errorCode == .noActiveWorkout)
        var id: Int64 = 0
        let pageSize = try await store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 1 }
        for _ in 0..<cycles {
            let lines: [(CommandType, DecodedLine)] = [
                (.startWorkout, DecodedLines.start(id + 1)), (.endWorkout, DecodedLines.end(id + 2)),
                (.shareWorkout, DecodedLines.share(id + 3)),
            ]
            id += 3
            for (type, line) in lines {
                let before = try WALFrames(path: walPath)
                let sizeBefore = try before.sizes.last ?? Self.pagesInFile(walPath.dropLast(4), pageSize: pageSize)
                let replies = await session.handle([line])
                #expect(replies.first?.isSuccess == true)
                let commits = try WALFrames(path: walPath).commits.dropFirst(before.commits.count)
                #expect(commits.count == 1, "one commit per single-flight command")
                pages[type, default: []].append(contentsOf: commits.map { Commit(pages: $0, sizeBefore: sizeBefore) })
            }
        }
        return pages
    }

    static func pagesInFile(_ path: Substring, pageSize: Int) throws -> UInt32 {
        let bytes = try FileManager.default.attributesOfItem(atPath: String(path))[.size] as? Int ?? 0
        return UInt32(bytes / pageSize)
    }
}
