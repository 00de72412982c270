import Foundation
import Testing
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// One owner, private files: a state directory someone else could write is refused (73, naming it).
///
/// The lock is never followed through a symlink nor truncated, and what the daemon writes there is 0600 whatever the
/// umask it was started under. Run as root (chown to another uid needs it).
@Suite(
    .serialized,
    .enabled(if: getuid() == 0, "needs root to chown the state directory"),
    .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")
)
struct PrivateStateTests {
    private func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "private-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Starts the daemon on `state` and returns its exit status and log (it is expected to refuse).
    private func refusedStart(state: String) throws -> (status: Int32, log: String) {
        let daemon = try DaemonProcess(arguments: [
            "--state-dir", state, "--control-socket", "none", "--log-level", "info",
        ])
        let status = try daemon.waitForExit()
        return (status, daemon.log)
    }

    private func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    @Test func aSymlinkedLockIsRefusedAndItsTargetUntouched() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state").path
        try FileManager.default.createDirectory(
            atPath: state,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700]
        )
        let target = directory.appendingPathComponent("precious").path
        try "keep me\n".write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: state + "/workoutd.lock", withDestinationPath: target)

        let result = try refusedStart(state: state)
        #expect(result.status == 73)
        #expect(
            result.log.contains("lock \(state)/workoutd.lock is a symbolic link; refusing to follow it"),
            "\(result.log)"
        )
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n", "the target is untouched")
        #expect(!FileManager.default.fileExists(atPath: state + "/workoutd.sqlite"), "nothing was opened")
    }

    @Test func aStateDirectoryOthersMayWriteIsRefused() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        #expect(chmod(state, 0o777) == 0)

        let result = try refusedStart(state: state)
        #expect(result.status == 73)
        #expect(
            result.log.contains("state directory \(state) is writable by group or others (mode 777)"),
            "\(result.log)"
        )
        #expect(!FileManager.default.fileExists(atPath: state + "/workoutd.lock"))
    }

    @Test func aStateDirectoryOwnedByAnotherUserIsRefused() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state").path
        try FileManager.default.createDirectory(
            atPath: state,
            withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700]
        )
        #expect(chown(state, 65534, 65534) == 0)

        let result = try refusedStart(state: state)
        #expect(result.status == 73)
        #expect(
            result.log.contains("state directory \(state) is owned by uid 65534, not by the daemon's uid 0"),
            "\(result.log)"
        )
    }

    @Test func aMissingStateDirectoryIsCreated0700() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("fresh").path
        let daemon = try DaemonProcess(
            arguments: ["--state-dir", state, "--control-socket", "none", "--log-level", "info"],
            readiness: true
        )
        try daemon.waitUntilReady()
        #expect(mode(state) == 0o700)
        // The lock holds the pid at a fixed width, never truncated.
        let lock = try String(contentsOfFile: state + "/workoutd.lock", encoding: .utf8)
        #expect(
            lock == String(repeating: " ", count: 10 - String(daemon.process.processIdentifier).count)
                + "\(daemon.process.processIdentifier)\n"
        )
        daemon.stop()
    }

    @Test func filesAre0600UnderUmask022() throws {
        let wearable = try SimulatedWearable()
        // The daemon inherits the test's umask: the usual 022, under which files would be created 0644.
        let previous = umask(0o022)
        defer { umask(previous) }
        var daemon: ControlledDaemon? = try ControlledDaemon(
            devices: [wearable.devicePath],
            configuration: "log_level: info\nshares:\n  twitter:\n    sink: spool\n"
        )
        guard let running = daemon else { return }
        try running.waitUntilConnected(wearable.devicePath)
        let state = running.directory.appendingPathComponent("state").path
        // Where an older version wrote its temporary spool file (a name anyone could guess): a symlink planted
        // there must not be followed.
        let planted = running.directory.appendingPathComponent("planted-target").path
        try "untouched\n".write(toFile: planted, atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(
            atPath: state + "/outbox/twitter",
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let guessed = state + "/outbox/twitter/.share-1.json.\(running.daemon.process.processIdentifier).tmp"
        try FileManager.default.createSymbolicLink(atPath: guessed, withDestinationPath: planted)
        for line in [CommandLines.start(), CommandLines.end(), CommandLines.share()] {
            #expect(try running.ctl(["send", "--device", wearable.devicePath, line]).status == 0)
        }
        let spool = state + "/outbox/twitter/share-1.json"
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: spool), ContinuousClock.now < deadline { usleep(20_000) }

        let files = [
            "workoutd.sqlite", "workoutd.sqlite-wal", "workoutd.sqlite-shm", "workoutd.lock",
            "outbox/twitter/share-1.json",
        ]
        for file in files {
            #expect(
                mode(state + "/" + file) == 0o600,
                "\(file) is \(mode(state + "/" + file).map { String($0, radix: 8) } ?? "missing")"
            )
        }
        for folder in ["outbox", "outbox/twitter"] {
            #expect(mode(state + "/" + folder) == 0o700, "\(folder)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: state + "/outbox/twitter").filter {
            $0.hasSuffix(".tmp")
        }
        #expect(leftovers == [(guessed as NSString).lastPathComponent], "only the planted link; no temporary file left")
        #expect(try String(contentsOfFile: planted, encoding: .utf8) == "untouched\n")
        #expect(try String(contentsOfFile: spool, encoding: .utf8).contains("\"service\":\"twitter\""))

        // Files an older daemon left 0644 are made private at the next start.
        running.daemon.stop()
        for file in files.prefix(4) { _ = chmod(state + "/" + file, 0o644) }
        let restarted = try DaemonProcess(
            arguments: ["--state-dir", state, "--control-socket", "none", "--log-level", "info"],
            readiness: true
        )
        try restarted.waitUntilReady()
        for file in ["workoutd.sqlite", "workoutd.sqlite-wal", "workoutd.sqlite-shm", "workoutd.lock"] {
            #expect(mode(state + "/" + file) == 0o600, "\(file) after restart")
        }
        restarted.stop()
        daemon = nil
    }
}
