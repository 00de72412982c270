import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

@Suite struct StorageFaultTests {
    @Test(.enabled(if: TmpfsMount.isPermitted, "mount -t tmpfs is not permitted here (needs root with CAP_SYS_ADMIN)"))
    func aFullDiskGivesStorageUnavailableAndRecoversByItself() async throws {
        let disk = try TmpfsMount(sizeKiB: 1024)
        defer { disk.unmount() }
        let store = try SQLiteWorkoutStore(stateDirectory: disk.path)
        let engine = try await WorkoutEngine(store: store)
        let session = engine.session(for: "wearable-1")
        #expect(await session.handle([DecodedLines.start(1), DecodedLines.end(2)]).allSatisfy { $0.isSuccess })

        try disk.fill()
        let long = String(repeating: "x", count: 256)
        var refused: [Reply] = []
        var refusedIDs: Set<CommandID> = []
        var acknowledged: Set<CommandID> = [.integer(1), .integer(3)]
        // Enough pages to outgrow whatever room the WAL file already has.
        for n in Int64(0)..<20 {
            var lines: [DecodedLine] = []
            for k in Int64(0)..<50 {
                lines += [
                    DecodedLines.start(1000 + n * 100 + 2 * k, location: long),
                    DecodedLines.end(1001 + n * 100 + 2 * k),
                ]
            }
            refused = await session.handle(lines)
            let starts = Set(lines.enumerated().filter { $0.offset % 2 == 0 }.compactMap(\.element.id))
            if refused.allSatisfy({ $0.isSuccess }) {
                acknowledged.formUnion(starts)
            } else {
                refusedIDs = starts
                break
            }
        }
        #expect(!refused.isEmpty && refused.allSatisfy { $0.errorCode == .storageUnavailable })
        // A small commit may still fit in room the WAL file already has (1 KiB pages leave more such room than
        // 4 KiB ones): it is then acked and kept. Either way it is not acked and lost.
        let shareOnFullDisk = await session.handle([DecodedLines.share(6)]).first
        let shareKept = shareOnFullDisk?.isSuccess == true
        #expect(shareKept || shareOnFullDisk?.errorCode == .storageUnavailable)

        try disk.free()
        let after = await session.handle([DecodedLines.start(3), DecodedLines.end(4), DecodedLines.share(5)])
        #expect(
            after.allSatisfy { $0.isSuccess },
            "the first commit after space returns must succeed without a restart"
        )
        // The refused batch left nothing; everything acknowledged is there after a reopen.
        try store.close()
        let reopened = try SQLiteWorkoutStore(stateDirectory: disk.path)
        let stored = Set(try await reopened.workouts(device: nil, limit: nil).compactMap(\.startCommandID))
        #expect(stored == acknowledged)
        #expect(stored.isDisjoint(with: refusedIDs))
        #expect(try await reopened.shares(limit: nil).count == (shareKept ? 2 : 1))
        try reopened.close()
    }

    /// A read-only file system cannot be produced under a running store here.
    ///
    /// `remount,ro` is refused (EBUSY) while SQLite holds files open for writing, and root ignores directory
    /// permissions. What can happen is a daemon starting on one, which must say so plainly; the full disk above covers
    /// failing and recovering at run time.
    @Test(.enabled(if: TmpfsMount.isPermitted, "mount -t tmpfs is not permitted here (needs root with CAP_SYS_ADMIN)"))
    func aReadOnlyStateDirectoryIsAClearErrorAtStart() async throws {
        let disk = try TmpfsMount(sizeKiB: 4096)
        defer { disk.unmount() }
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: disk.path)
            let engine = try await WorkoutEngine(store: store)
            #expect(await engine.session(for: "wearable-1").handle([DecodedLines.start(1)]).first?.isSuccess == true)
            try store.close()
        }
        try #require(TmpfsMount.run("/bin/mount", "-o", "remount,ro", disk.path) == 0)
        let error = try #require(throws: StorageOpenError.self) { try SQLiteWorkoutStore(stateDirectory: disk.path) }
        #expect(error.description.contains(disk.path + "/" + SQLiteWorkoutStore.fileName))
        // Inspection still works on the read-only copy.
        let inspected = try SQLiteWorkoutStore(stateDirectory: disk.path, mode: .readOnly)
        #expect(try await inspected.workouts(device: nil, limit: nil).first?.startCommandID == .integer(1))
        try inspected.close()
        #expect(TmpfsMount.run("/bin/mount", "-o", "remount,rw", disk.path) == 0)
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = Data("these are somebody's notes, not a database\n".utf8) + Data((0..<5000).map { UInt8($0 % 251) })
        try bytes.write(to: URL(fileURLWithPath: directory.databasePath))

        let error = try #require(throws: StorageOpenError.self) {
            try SQLiteWorkoutStore(stateDirectory: directory.path)
        }
        #expect(error.kind == .notADatabase)
        #expect(error.description.contains(directory.databasePath))
        #expect(error.description.contains("not an SQLite database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.databasePath)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [SQLiteWorkoutStore.fileName])
    }

    @Test func anotherProgramsSQLiteDatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(
            TmpfsMount.run(
                "/usr/bin/sqlite3",
                directory.databasePath,
                "CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES ('Ada');"
            ) == 0
        )
        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.databasePath))

        let error = try #require(throws: StorageOpenError.self) {
            try SQLiteWorkoutStore(stateDirectory: directory.path)
        }
        #expect(error.kind == .foreignDatabase)
        #expect(error.description.contains(directory.databasePath))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.databasePath)) == bytes)
    }

    /// A workoutd database of 200 workouts with the middle of the file scribbled over; returns its bytes.
    private func makeDamagedDatabase(in directory: TemporaryDirectory) async throws -> Data {
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            let engine = try await WorkoutEngine(store: store)
            let session = engine.session(for: "wearable-1")
            for n in Int64(0)..<200 {
                _ = await session.handle([
                    DecodedLines.start(2 * n, location: String(repeating: "g", count: 200)),
                    DecodedLines.end(2 * n + 1),
                ])
            }
            // Into the main file, so the scribbling below hits the tables rather than an unread WAL.
            _ = try await store.database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            try store.close()
        }
        // Scribble over the second half of the file: the workouts' pages. The schema's pages (several with small
        // pages) were written first, by the migrations, so they stay intact and the file still opens.
        let url = URL(fileURLWithPath: directory.databasePath)
        var bytes = try Data(contentsOf: url)
        try #require(bytes.count > 16 * 4096)
        for offset in (bytes.count / 2)..<(bytes.count - 4096) where offset % 7 == 0 { bytes[offset] = 0xA5 }
        try bytes.write(to: url)
        return bytes
    }

    @Test func aDamagedWorkoutdDatabaseIsRefusedAndLeftAlone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = try await makeDamagedDatabase(in: directory)
        let url = URL(fileURLWithPath: directory.databasePath)

        let error = try #require(throws: StorageOpenError.self) {
            try SQLiteWorkoutStore(stateDirectory: directory.path)
        }
        #expect(error.kind == .corrupt)
        #expect(error.description.contains(directory.databasePath))
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func aDatabaseTooLargeToCheckAtOpenIsCheckedAfterwardsAndTheDamageNamed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await makeDamagedDatabase(in: directory)

        // Larger than the limit: only the header and schema are checked at open, and they are intact.
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path, integrityCheckAtOpenLimit: 4096)
        #expect(!store.integrityCheckedAtOpen)
        let problems = try await store.checkIntegrity()
        #expect(!problems.isEmpty, "the full check finds the damage the open skipped")
        try store.close()

        // A sound database passes the same check.
        let sound = try TemporaryDirectory()
        defer { sound.remove() }
        let fresh = try SQLiteWorkoutStore(stateDirectory: sound.path)
        _ = try await WorkoutEngine(store: fresh).session(for: "wearable-1").handle([
            DecodedLines.start(1), DecodedLines.end(2),
        ])
        try fresh.close()
        let reopened = try SQLiteWorkoutStore(stateDirectory: sound.path, integrityCheckAtOpenLimit: 0)
        #expect(!reopened.integrityCheckedAtOpen)
        #expect(try await reopened.checkIntegrity() == [])
    }

    @Test func inspectingAMissingDatabaseSaysSoAndCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let error = try #require(throws: StorageOpenError.self) {
            try SQLiteWorkoutStore(stateDirectory: directory.path, mode: .readOnly)
        }
        #expect(error.kind == .missing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
