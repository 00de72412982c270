import ControlProtocol
import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// The state directory's file system turns read-only under the daemon.
///
/// The file system is a loop-mounted ext4 with `errors=remount-ro`, failed through ext4's own error path. Storing
/// commands get `storage_unavailable`, the daemon stays up and says why; once the volume is repaired (`e2fsck`) and
/// mounted afresh at the same path it recovers by itself, and nothing acknowledged is lost. Needs root (mount,
/// losetup), which the test runs have.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct ReadOnlyStorageTests {
    @discardableResult
    static func sh(_ command: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @discardableResult
    static func must(_ command: String) throws -> String {
        let (status, output) = try sh(command)
        guard status == 0 else { throw TestingError("`\(command)` exited \(status): \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A loop-mounted ext4 "card" as the state directory, with a configuration beside it.
    ///
    /// The card is mounted `errors=remount-ro`, as a hub's SD card is.
    struct Card {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ro-\(UUID().uuidString.prefix(8))"
        ).path
        var state: String { directory + "/state" }
        var image: String { directory + "/card.img" }
        var socket: String { directory + "/control.sock" }
        var config: String { directory + "/workoutd.yaml" }

        init() throws {
            try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
            try ReadOnlyStorageTests.must(
                "truncate -s 48M \(image) && mkfs.ext4 -q -F \(image) && mount -o loop,errors=remount-ro \(image) \(state) && chmod 0700 \(state)"
            )
            try "discovery:\n  enabled: false\n".write(toFile: config, atomically: true, encoding: .utf8)
        }

        func startDaemon(serving wearable: SimulatedWearable) throws -> DaemonProcess {
            let daemon = try DaemonProcess(
                arguments: [
                    "--config", config, "--control-socket", socket, "--state-dir", state, "--device",
                    wearable.devicePath,
                ],
                readiness: true
            )
            try daemon.waitUntilReady()
            return daemon
        }

        /// The card fails: ext4's own error path remounts it read-only.
        func fail() throws {
            let loop = try ReadOnlyStorageTests.must("basename $(findmnt -no SOURCE \(state))")
            try ReadOnlyStorageTests.must("echo 1 > /sys/fs/ext4/\(loop)/trigger_fs_error")
        }

        /// Repaired as an operator would.
        ///
        /// The live mount is busy (the daemon's files), so it is detached lazily (`umount -l`), and a copy of the card
        /// is checked (`e2fsck -fy`). Returns the repaired image, not mounted.
        func detachAndRepair() throws -> String {
            let repaired = directory + "/card-repaired.img"
            try ReadOnlyStorageTests.must("umount -l \(state) && cp \(image) \(repaired)")
            let fsck = try ReadOnlyStorageTests.sh("e2fsck -fy \(repaired)")
            #expect(fsck.status <= 1, "e2fsck: \(fsck.output)")
            return repaired
        }

        func remove() {
            _ = try? ReadOnlyStorageTests.sh("umount -l \(state); umount -l \(directory)/side; rm -rf \(directory)")
        }
    }

    @Test(.enabled(if: getuid() == 0, "mounting needs root"))
    func aFileSystemTurnedReadOnlyIsReportedAndRecoveredFromOnceMountedAfresh() throws {
        let card = try Card()
        defer { card.remove() }
        let (state, socket, config) = (card.state, card.socket, card.config)
        let wearable = try SimulatedWearable()
        let daemon = try card.startDaemon(serving: wearable)
        defer { daemon.stop() }

        // Acknowledged before the card fails.
        var acked: Set<CommandID> = []
        for n in 0..<20 {
            for line in [CommandLines.start(id: .init(2 * n)), CommandLines.end(id: .init(2 * n + 1))] {
                let reply = try wearable.request(line)
                #expect(reply.contains(#""status":"ok""#), "\(reply)")
            }
            acked.insert(.integer(Int64(2 * n)))
        }

        // The card fails: ext4 remounts it read-only.
        try card.fail()
        let probe = try Self.sh("touch \(state)/probe")
        #expect(probe.status != 0 && probe.output.contains("Read-only file system"), "\(probe.output)")
        for n in 0..<3 {
            let reply = try wearable.request(CommandLines.start(id: .init(1000 + n)))
            #expect(reply.contains(#""code":"storage_unavailable""#), "\(reply)")
        }
        #expect(daemon.process.isRunning)
        let status = try Workoutctl.run(["--socket", socket, "status"])
        let storageRow = status.stdout.split(separator: "\n").first { $0.hasPrefix("storage") }
        #expect(storageRow?.contains("unavailable since") == true, "\(status.stdout)")
        #expect(daemon.log.contains("storage unavailable"), "\(daemon.log)")

        // Repaired and mounted afresh at the same path; the live mount is busy (the daemon's files), so it is
        // detached lazily, as an operator's `umount -l` would.
        var oldCard = stat()
        #expect(stat(state, &oldCard) == 0)
        let repaired = try card.detachAndRepair()
        try Self.must("mount -o loop,errors=remount-ro \(repaired) \(state)")

        // The daemon notices by itself; a wearable retrying (with new ids, as its earlier ones were refused) gets ok.
        var recovered: CommandID?
        for attempt in 0..<300 where recovered == nil {
            let id = 2000 + attempt
            let reply = try wearable.request(CommandLines.start(id: .init(id)))
            if reply.contains(#""status":"ok""#) {
                recovered = .integer(Int64(id))
            } else {
                #expect(reply.contains(#""code":"storage_unavailable""#), "\(reply)")
                usleep(200_000)
            }
        }
        let first = try #require(recovered, "no recovery: \(daemon.log)")
        acked.insert(first)
        #expect(try wearable.request(CommandLines.end(id: 9999)).contains(#""status":"ok""#))
        // Logged once the reopen returned, which is after the swap a retried command may already have used.
        try daemon.waitForLog("database reopened")
        let after = try Workoutctl.run(["--socket", socket, "status"])
        #expect(!after.stdout.split(separator: "\n").contains { $0.hasPrefix("storage") }, "\(after.stdout)")

        // Nothing acknowledged was lost.
        let listed = try Workoutctl.run(["--socket", socket, "workouts", "--json"])
        let decoder = ControlSocket.makeDecoder()
        let workouts = try listed.stdout.split(separator: "\n").map {
            try decoder.decode(WorkoutRecord.self, from: Data($0.utf8))
        }
        let stored = Set(workouts.compactMap(\.startCommandID))
        #expect(acked.isSubset(of: stored), "missing: \(acked.subtracting(stored))")
        #expect(workouts.count == 21)

        // The state directory's lock followed the directory to the new card: the daemon holds nothing on the old
        // one any more (no descriptor, no mapping: it can go), and a second daemon on the directory is refused.
        let pid = daemon.process.processIdentifier
        let onOldCard = Self.files(heldBy: pid, onDevice: oldCard.st_dev)
        #expect(onOldCard.isEmpty, "still held on the old card: \(onOldCard)")
        #expect(daemon.log.contains("state directory lock taken again"), "\(daemon.log)")
        let second = try DaemonProcess(arguments: [
            "--config", config, "--state-dir", state, "--control-socket", "none",
        ])
        defer { second.stop() }
        #expect(try second.waitForExit() == 73)
        #expect(second.log.contains("state directory \(state) is in use by pid \(pid)"), "\(second.log)")
        #expect(daemon.process.isRunning)
    }

    /// While the card was failing, another process took the directory on the repaired card.
    ///
    /// As a second daemon started then would: the daemon does not reopen the database there, says why in the journal
    /// and keeps refusing with `storage_unavailable`; once the other lets go, it takes the lock and recovers by itself.
    @Test(.enabled(if: getuid() == 0, "mounting needs root"))
    func aDirectoryTakenByAnotherOnTheRepairedCardIsNotWrittenUntilItIsFreed() throws {
        let card = try Card()
        defer { card.remove() }
        let wearable = try SimulatedWearable()
        let daemon = try card.startDaemon(serving: wearable)
        defer { daemon.stop() }
        for line in [CommandLines.start(id: 1), CommandLines.end(id: 2)] {
            #expect(try wearable.request(line).contains(#""status":"ok""#))
        }
        try card.fail()
        #expect(try wearable.request(CommandLines.start(id: 3)).contains(#""code":"storage_unavailable""#))

        // The repaired card is mounted beside the directory, its lock taken there by this process (with its pid,
        // as a daemon writes it), and only then mounted at the directory's path (a bind: the same file system), so
        // the daemon never sees the new card unlocked.
        let repaired = try card.detachAndRepair()
        let side = card.directory + "/side"
        try Self.must("mkdir \(side) && mount -o loop,errors=remount-ro \(repaired) \(side)")
        let other = open(side + "/workoutd.lock", O_RDWR | O_CLOEXEC)
        #expect(other >= 0 && flock(other, LOCK_EX | LOCK_NB) == 0)
        let pidLine = Array(String(format: "%10d\n", getpid()).utf8)
        #expect(pidLine.withUnsafeBytes { pwrite(other, $0.baseAddress, $0.count, 0) } == pidLine.count)
        try Self.must("mount --bind \(side) \(card.state)")

        try daemon.waitForLog("state directory lock cannot be taken again")
        #expect(daemon.log.contains("is in use by pid \(getpid())"), "\(daemon.log)")
        #expect(!daemon.log.contains("database reopened"), "\(daemon.log)")
        #expect(try wearable.request(CommandLines.start(id: 4)).contains(#""code":"storage_unavailable""#))
        #expect(daemon.process.isRunning)

        // The other lets go: the daemon takes the directory and stores again (the wearable retries as it would).
        close(other)
        var recovered = false
        for attempt in 0..<300 where !recovered {
            let reply = try wearable.request(CommandLines.start(id: .init(100 + attempt)))
            recovered = reply.contains(#""status":"ok""#)
            if !recovered {
                #expect(reply.contains(#""code":"storage_unavailable""#), "\(reply)")
                usleep(200_000)
            }
        }
        #expect(recovered, "no recovery: \(daemon.log)")
        try daemon.waitForLog("database reopened")
        let listed = try Workoutctl.run(["--socket", card.socket, "workouts", "--json"])
        #expect(
            listed.stdout.split(separator: "\n").count == 2,
            "the one acknowledged before and the one after: \(listed.stdout)"
        )
    }

    /// What `pid` has open or mapped on the file system of device `device`: what keeps a volume busy.
    ///
    /// Open is `/proc/PID/fd`, mapped is `/proc/PID/map_files` (root only).
    static func files(heldBy pid: pid_t, onDevice device: dev_t) -> [String] {
        var held: [String] = []
        for table in ["fd", "map_files"] {
            let directory = "/proc/\(pid)/\(table)"
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                let link = directory + "/" + entry
                var info = stat()
                guard stat(link, &info) == 0, info.st_dev == device else { continue }
                held.append("\(link) -> \((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) ?? "?")")
            }
        }
        return held
    }
}
