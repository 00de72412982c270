import Foundation
import Synchronization
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// One device floods the hub beside a quiet one, both on ptys served by the real daemon.
///
/// The flood is rate-limited and bounded in memory and disk; the quiet device is answered, all of it, in order.
/// Nothing here is timed: the bounds are counts (replies, rows, bytes, pages of memory).
@Suite("A flooding device beside a quiet one", .serialized)
struct FloodEndToEndTests {
    static let rate = 100
    static let burst = 200
    /// At least this many flood lines, and on until the quiet device is done.
    ///
    /// The two overlap by construction.
    static let minimumFloodLines = 6_000

    /// The flood's replies as its reader thread counts them.
    final class FloodTally: Sendable {
        struct Counts: Sendable {
            /// Lines the writer has sent or is sending; final once `lastWritten` is set.
            var written = 0
            var lastWritten = false
            /// Set when the quiet device is done: the flood's next chunk is its last.
            var quietDone = false
            var replies = 0
            var accepted = 0
            var acceptedStarts = 0
            var rateLimited = 0
            var other: [String] = []
            var failure: String?
        }
        let counts = Mutex(Counts())
        var snapshot: Counts { counts.withLock { $0 } }
    }

    /// A start line as large as a command can be: each accepted start stores as much as one command can.
    ///
    /// Its location has 250 characters and 1,000 bytes (the limits allow 256 and 1,024), and its id is near
    /// the 128-byte limit.
    static func floodLine(_ n: Int) -> String {
        let id = "flood-\(n)-" + String(repeating: "x", count: 100)
        if n.isMultiple(of: 2) {
            return CommandLines.start(id: .string(id), location: String(repeating: "\u{1D11E}", count: 250))
        }
        return CommandLines.end(id: .string(id))
    }

    static func residentKiB(_ pid: pid_t, _ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test("the flood gets rate_limited and stays bounded; the quiet device gets every reply, in order")
    func floodBesideQuiet() throws {
        let flood = try SimulatedWearable()
        let quiet = try SimulatedWearable()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("wd-flood-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let daemon = try DaemonProcess(
            arguments: [
                "--device", flood.devicePath, "--device", quiet.devicePath, "--state-dir", state,
                "--log-level", "info", "--control-socket", "none",
            ],
            environment: [
                "WORKOUTD_LIMITS_COMMANDS_PER_SECOND": "\(Self.rate)", "WORKOUTD_LIMITS_COMMAND_BURST": "\(Self.burst)",
            ]
        )
        defer { daemon.stop() }
        let pid = daemon.process.processIdentifier
        // Both served before the flood begins, so the memory baseline has both sessions' pipelines.
        #expect(
            try JSONDecoder().decode(Reply.self, from: Data(quiet.request(CommandLines.end(id: "q0")).utf8)).errorCode
                == .noActiveWorkout
        )
        #expect(
            try JSONDecoder().decode(Reply.self, from: Data(flood.request(CommandLines.end(id: "f0")).utf8)).errorCode
                == .noActiveWorkout
        )
        let baselineKiB = Self.residentKiB(pid, "VmRSS")
        let database = state + "/workoutd.sqlite"

        let tally = FloodTally()
        let reader = Thread {
            do {
                while tally.counts.withLock({ !$0.lastWritten || $0.replies < $0.written }) {
                    let reply = try JSONDecoder().decode(
                        Reply.self,
                        from: Data(flood.readLine(timeout: .seconds(120)).utf8)
                    )
                    tally.counts.withLock { counts in
                        counts.replies += 1
                        switch reply.outcome {
                        case .ok(let ack):
                            counts.accepted += 1
                            if ack.commandType == .startWorkout { counts.acceptedStarts += 1 }
                        case .error(let error) where error.code == .rateLimited:
                            counts.rateLimited += 1
                            if (error.retryAfterMilliseconds ?? 0) < 1 {
                                counts.other.append("rate_limited without retry_after_ms")
                            }
                        case .error(let error):
                            // An end after a refused start, or a start after a refused end: the flood's own doing.
                            if error.code != .noActiveWorkout && error.code != .workoutAlreadyActive {
                                counts.other.append(error.code.rawValue)
                            }
                        }
                    }
                }
            } catch {
                tally.counts.withLock { $0.failure = "\(error)" }
            }
        }
        let floodStarted = ContinuousClock.now
        reader.start()
        let writer = Thread {
            // Fifty lines a write, as fast as the pty takes them. A chunk is counted (and the last one marked) before
            // it is written, so the reader never waits for replies to lines that were not sent.
            var chunk = 0
            var last = false
            while !last {
                last = tally.counts.withLock { counts in
                    counts.written += 50
                    counts.lastWritten = counts.quietDone && counts.written >= Self.minimumFloodLines
                    return counts.lastWritten
                }
                let text = (chunk..<chunk + 50).map { Self.floodLine($0) + "\n" }.joined()
                chunk += 50
                do { try flood.write(Array(text.utf8), timeout: .seconds(120)) } catch {
                    tally.counts.withLock {
                        $0.failure = "write: \(error)"
                        $0.lastWritten = true
                    }
                    return
                }
            }
        }
        writer.start()

        // The quiet device goes to work once the flood is being refused.
        let deadline = ContinuousClock.now + .seconds(120)
        while tally.snapshot.rateLimited == 0, tally.snapshot.failure == nil, ContinuousClock.now < deadline {
            usleep(1_000)
        }
        #expect(tally.snapshot.rateLimited > 0, "the flood was never rate-limited")
        var quietReplies: [Reply] = []
        for cycle in 1...10 {
            for line in [
                CommandLines.start(id: CommandLines.ID(cycle * 10 + 1), location: "Quiet corner"),
                CommandLines.end(id: CommandLines.ID(cycle * 10 + 2)),
                CommandLines.share(id: CommandLines.ID(cycle * 10 + 3)),
            ] {
                quietReplies.append(try JSONDecoder().decode(Reply.self, from: Data(quiet.request(line).utf8)))
            }
        }
        tally.counts.withLock { $0.quietDone = true }

        while tally.counts.withLock({ !$0.lastWritten || $0.replies < $0.written }), tally.snapshot.failure == nil,
            ContinuousClock.now < deadline
        { usleep(10_000) }
        let floodSeconds = Double((ContinuousClock.now - floodStarted) / .milliseconds(1)) / 1000
        let counts = tally.snapshot
        let peakKiB = Self.residentKiB(pid, "VmHWM")
        let afterKiB = Self.residentKiB(pid, "VmRSS")

        // The quiet device: every command answered, in order, none refused.
        #expect(quietReplies.map(\.isSuccess) == Array(repeating: true, count: 30))
        let expectedIDs: [CommandID?] = (1...10).flatMap { (cycle: Int) -> [CommandID?] in
            [1, 2, 3].map { (step: Int) -> CommandID? in CommandID.integer(Int64(cycle * 10 + step)) }
        }
        #expect(quietReplies.map(\.id) == expectedIDs)
        #expect(quietReplies.allSatisfy { $0.errorCode != .rateLimited })

        // The flood: every line answered, most refused; what was accepted is what the bucket allows.
        #expect(counts.failure == nil)
        #expect(counts.replies == counts.written && counts.written >= Self.minimumFloodLines)
        #expect(counts.other.isEmpty, "\(counts.other.prefix(5))")
        #expect(counts.accepted + counts.rateLimited <= counts.written)
        #expect(counts.rateLimited > counts.written / 2)
        #expect(Double(counts.accepted) <= Double(Self.burst) + Double(Self.rate) * (floodSeconds + 1))

        // Disk: the flood stored exactly its accepted starts, and the files hold no more than they need.
        let listed = try Workoutctl.run(
            ["workouts", "--state-dir", state, "--device", flood.devicePath, "--json"],
            binary: DaemonProcess.binaryPath()
        )
        // One JSON object a line.
        let stored = listed.lines.filter { $0.hasPrefix("{") }.count
        #expect(stored == counts.acceptedStarts)
        let onDisk = Self.fileSize(database) + Self.fileSize(database + "-wal")
        // Per accepted command at most 4 KiB (its row, index entries and remembered reply, with page slack),
        // plus the empty schema and a WAL at its 4 MiB checkpoint limit.
        let diskBound = (counts.accepted + 32) * 4_096 + 256 * 1_024 + 4_300 * 1_024
        #expect(onDisk <= diskBound, "database and WAL: \(onDisk) bytes for \(counts.accepted) accepted commands")

        // Memory: the flood left the daemon's resident set within a bound (growth, from /proc).
        #expect(peakKiB - baselineKiB <= 24 * 1_024, "RSS from \(baselineKiB) KiB to a peak of \(peakKiB) KiB")
        print(
            "flood: \(counts.replies) lines in \(floodSeconds) s, \(counts.accepted) accepted, \(counts.rateLimited) rate_limited; disk \(onDisk) B (bound \(diskBound)); RSS \(baselineKiB) → peak \(peakKiB), now \(afterKiB) KiB"
        )
        #expect(daemon.process.isRunning)
    }
}
