import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

@Suite("storage faults, as the daemon's user meets them", .serialized)
struct StorageFaultEndToEndTests {
    /// EX_CANTCREAT: the database cannot be used and a restart would not help.
    static let storageExitStatus: Int32 = 73

    @Test func aCorruptDatabaseStopsTheDaemonAtStartAndIsLeftUntouched() throws {
        let setup = try DurabilitySetup()
        defer { setup.remove() }
        try FileManager.default.createDirectory(atPath: setup.stateDirectory, withIntermediateDirectories: true)
        let database = setup.stateDirectory + "/workoutd.sqlite"
        let bytes = Data("SQLite format 3\0".utf8) + Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try bytes.write(to: URL(fileURLWithPath: database))
        let before = try FileManager.default.attributesOfItem(atPath: database)[.modificationDate] as? Date

        let wearable = try SimulatedWearable()
        let daemon = try setup.startDaemon(device: wearable.devicePath)
        #expect(try daemon.waitForExit() == Self.storageExitStatus, "log:\n\(daemon.log)")
        #expect(daemon.log.contains(database), "the error names the file:\n\(daemon.log)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == bytes, "the file was changed")
        #expect(try FileManager.default.attributesOfItem(atPath: database)[.modificationDate] as? Date == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: setup.stateDirectory).sorted() == [
                "workoutd.lock", "workoutd.sqlite",
            ],
            "no journal, WAL or replacement beside it (only the state directory's lock)"
        )
    }

    @Test func aLargeDamagedDatabaseIsServedAndTheCheckAfterStartUpReportsTheDamage() throws {
        let setup = try DurabilitySetup()
        defer { setup.remove() }
        let wearable = try SimulatedWearable()
        func start(_ n: Int) -> String {
            CommandLines.start(id: "start-\(n)")
        }
        do {
            let daemon = try setup.startDaemon(device: wearable.devicePath)
            #expect(try decode(wearable.request(start(1))).isSuccess)
            #expect(try decode(wearable.request(CommandLines.end(id: "end-1"))).isSuccess)
            daemon.stop()
        }
        // Past the size checked whole at open: a table of some 6 MB the daemon never reads while serving, added
        // after its own pages, so the damage below is in pages start-up does not touch.
        let database = setup.stateDirectory + "/workoutd.sqlite"
        #expect(
            TmpfsMount.run(
                "/usr/bin/sqlite3",
                database,
                """
                CREATE TABLE filler(x BLOB);
                WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 6000) INSERT INTO filler SELECT randomblob(1000) FROM c;
                """
            ) == 0
        )
        let url = URL(fileURLWithPath: database)
        var bytes = try Data(contentsOf: url)
        try #require(bytes.count > 5 << 20, "\(bytes.count) bytes")
        // An invalid page type in the header of a page three quarters in (one of the filler's).
        let page = (bytes.count / 4096) * 3 / 4
        for offset in (page * 4096)..<(page * 4096 + 8) { bytes[offset] = 0xFF }
        try bytes.write(to: url)

        let daemon = try setup.startDaemon(device: wearable.devicePath)
        defer { daemon.stop() }
        try daemon.waitForLog("storage integrity check FAILED", timeout: .seconds(120))
        #expect(daemon.process.isRunning, "a failed check does not stop the daemon:\n\(daemon.log)")
        #expect(try decode(wearable.request(start(2))).isSuccess, "serving goes on:\n\(daemon.log)")
    }

    @Test(.enabled(if: TmpfsMount.isPermitted, "mount -t tmpfs is not permitted here (needs root with CAP_SYS_ADMIN)"))
    func aFullDiskGivesStorageUnavailableAndTheDaemonRecoversByItself() throws {
        let disk = try TmpfsMount(sizeKiB: 1024)
        defer { disk.unmount() }
        let setup = try DurabilitySetup(stateDirectory: disk.path)
        defer { setup.remove() }
        let wearable = try SimulatedWearable()
        let daemon = try setup.startDaemon(device: wearable.devicePath)
        defer { daemon.stop() }
        let location = String(repeating: "x", count: Workout.maximumLocationLength - 8)
        func start(_ n: Int) -> String {
            CommandLines.start(id: "start-\(n)", location: location)
        }
        func end(_ n: Int) -> String { CommandLines.end(id: "end-\(n)") }
        func send(_ line: String) throws -> Reply { try decode(wearable.request(line, timeout: .seconds(10))) }
        let share = CommandLines.share(id: "share-after-full")
        #expect(try send(start(0)).isSuccess && send(end(0)).isSuccess)

        try disk.fill()
        // Workouts until the database needs a page the disk no longer has (the WAL may have room left).
        var acknowledged: Set<String> = ["start-0"]
        var refused: (n: Int, lines: [String], reply: Reply)?
        cycles: for n in 1...4000 {
            for (index, line) in [start(n), end(n)].enumerated() {
                let reply = try send(line)
                guard reply.isSuccess else {
                    // The refused command and what the cycle still needs after it.
                    refused = (n, Array([start(n), end(n)].dropFirst(index)), reply)
                    break cycles
                }
                if index == 0 { acknowledged.insert("start-\(n)") }
            }
        }
        let (refusedCycle, retries, refusal) = try #require(refused, "the disk never filled up")
        #expect(refusal.errorCode == .storageUnavailable, "\(refusal)")
        // A share is small enough to fit in room the WAL file may still have (more so with 1 KiB pages): it is
        // then acked and kept, and its retry below is a replay. Either way it is not acked and lost.
        let shareOnFullDisk = try send(share)
        #expect(shareOnFullDisk.isSuccess || shareOnFullDisk.errorCode == .storageUnavailable, "\(shareOnFullDisk)")
        #expect(daemon.process.isRunning, "the daemon must stay up on a full disk")

        try disk.free()
        // No restart: the refused commands, retried with their ids, now go through (refusals are not remembered).
        for line in retries {
            let reply = try send(line)
            #expect(reply.isSuccess && !reply.replayed, "\(reply)")
        }
        let shareRetried = try send(share)
        #expect(shareRetried.isSuccess && shareRetried.replayed == shareOnFullDisk.isSuccess, "\(shareRetried)")
        acknowledged.insert("start-\(refusedCycle)")

        daemon.stop()
        let stored = try OfflineInspection.workouts(in: disk.path).compactMap(\.startCommandID?.description)
        #expect(
            Set(stored) == acknowledged && stored.count == acknowledged.count,
            "stored \(stored.count), acknowledged \(acknowledged.count)"
        )
        #expect(try OfflineInspection.shares(in: disk.path).map(\.commandID) == [.string("share-after-full")])
        print(
            "full disk: storage_unavailable at cycle \(refusedCycle) (\(retries.count == 2 ? "start" : "end")) after \(acknowledged.count - 2) more workouts; recovered without a restart"
        )
    }

    private func decode(_ line: String) throws -> Reply {
        try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
    }
}
