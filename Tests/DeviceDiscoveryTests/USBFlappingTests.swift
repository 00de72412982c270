import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// Flapping USB: 2,000 plug and unplug cycles in bursts against the real daemon.
///
/// Some cycles are cut mid-line, and the node number changes; the daemon inherits the umockdev testbed. Afterwards its
/// descriptors, threads and resident memory are where they were, and each wearable that then stays plugged is served.
/// Counts only: how fast the bursts run does not matter.
extension HotplugTests {
    /// What a process holds, from /proc.
    struct Holdings: CustomStringConvertible {
        var fds: Int
        var threads: Int
        var rssKiB: Int

        init(pid: Int32) throws {
            fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
            threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            rssKiB = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }

        var description: String { "\(fds) fds, \(threads) threads, \(rssKiB) KiB resident" }
    }

    /// The bounds: two descriptors more than at the start would be a leak per thousand cycles at most.
    ///
    /// Memory may move by what allocators keep (a few MiB), not by what 2,000 cycles would leak. Each cycle is
    /// unplugged only once the daemon has opened its node. Why not sooner: umockdev's preload keeps a fixed table of
    /// the device descriptors a process opens, and an open of a node that vanished first left an entry behind; after
    /// some fifty such opens it aborted the daemon (a limit of the mock, not of the daemon: nothing of it showed in the
    /// daemon's /proc/PID/fd).
    static let fdSlack = 2
    /// Dispatch's worker pool grows and shrinks by a few threads with load (it is bounded by the cores).
    ///
    /// A leak per cycle would be thousands.
    static let threadSlack = 4
    static let rssSlackKiB = 8 * 1024

    @Test(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes"))
    func twoThousandFlappingCyclesLeaveDescriptorsThreadsAndMemoryWhereTheyWere() async throws {
        let harness = try await DiscoveryHarness()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flap-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("workoutd.yaml").path
        try "log_level: warning\n".write(toFile: config, atomically: true, encoding: .utf8)
        let socket = directory.appendingPathComponent("control.sock").path
        let daemon = try DaemonProcess(arguments: [
            "--config", config, "--control-socket", socket, "--state-dir",
            directory.appendingPathComponent("state").path,
            "--log-level", "info",
        ])
        defer { daemon.stop() }
        try daemon.waitForLog("device discovery ready")
        let pid = daemon.process.processIdentifier

        // Each wearable starts a workout, so its session (and its active workout) must survive the flapping.
        let serials = ["WRB-F001", "WRB-F002"]
        var node = 0
        func plugBoth() throws -> [MockWearable] {
            try serials.map { serial in
                defer { node += 1 }
                return try harness.plugWearable(node: "ttyACM\(node)", port: "1-\(node % 8 + 1)", serial: serial)
            }
        }
        for wearable in try plugBoth() {
            #expect(
                try await wearable.exchange(WireCommand.start(id: 1), timeout: .seconds(30))?.startedWorkoutID != nil,
                "\(daemon.log)"
            )
            harness.testbed.unplug(wearable.tty)
        }

        // A first round of flapping brings every lazily made pool and buffer into being: the baseline is after it.
        let log = LogCounter(path: daemon.logPath)
        var removed = 2
        var connected = 2
        try await log.waitFor("device removed", count: removed, daemon: daemon)
        func flap(_ cycles: Int, burst: Int) async throws {
            var cycle = 0
            while cycle < cycles {
                let inBurst = min(burst, cycles - cycle)
                for _ in 0..<inBurst {
                    let wearable = try harness.plugWearable(
                        node: "ttyACM\(node)",
                        port: "1-\(node % 8 + 1)",
                        serial: serials[cycle % 2]
                    )
                    node += 1
                    // Pulled once the daemon has it open (see below); every third one mid-line: half a command
                    // on the wire, no newline.
                    connected += 1
                    try await log.waitFor("device connected", count: connected, daemon: daemon)
                    if cycle % 3 == 0 { _ = wearable.write(Array(#"{"command_type":"end_wor"#.utf8)) }
                    harness.testbed.unplug(wearable.tty)
                    cycle += 1
                }
                // The next burst once the daemon has taken this one's removals in: umockdev delivers uevents as unix
                // datagrams (at most net.unix.max_dgram_qlen, 10, queued per listener) and aborts the test process
                // when one is full, where a real kernel would drop them and the listener get ENOBUFS.
                removed += inBurst
                try await log.waitFor("device removed", count: removed, daemon: daemon)
            }
        }
        try await flap(200, burst: 3)
        let baseline = try await settled(pid: pid, below: nil)

        try await flap(2000, burst: 3)
        #expect(daemon.process.isRunning, "\(daemon.log.suffix(3000))")

        // Each wearable, now plugged for good (on new nodes), is served and still has its workout; then both are
        // unplugged, so the daemon holds what it held at the baseline (no device open).
        for wearable in try plugBoth() {
            let reply = try await wearable.exchange(WireCommand.end(id: 2), timeout: .seconds(30))
            #expect(reply?.endedWorkoutID != nil, "\(String(describing: reply)) \(daemon.log.suffix(3000))")
            harness.testbed.unplug(wearable.tty)
        }
        removed += 2
        try await log.waitFor("device removed", count: removed, daemon: daemon)
        let after = try await settled(pid: pid, below: baseline)
        print("USB flapping: baseline \(baseline), after 2,000 cycles \(after)")
        #expect(after.fds <= baseline.fds + Self.fdSlack, "\(after) vs \(baseline): \(Self.descriptors(of: pid))")
        #expect(after.threads <= baseline.threads + Self.threadSlack, "\(after) vs \(baseline)")
        #expect(after.rssKiB <= baseline.rssKiB + Self.rssSlackKiB, "\(after) vs \(baseline)")
        daemon.stop()
        await harness.stop()
    }

    /// What each of the process's descriptors is, for a failure message.
    static func descriptors(of pid: Int32) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            .sorted()
    }

    /// The daemon's holdings once the devices it is letting go are gone.
    ///
    /// Waits (up to a minute) until they stop falling, or are within the bounds of `baseline`. Waiting is not what is
    /// tested; the counts are.
    private func settled(pid: Int32, below baseline: Holdings?) async throws -> Holdings {
        var last = try Holdings(pid: pid)
        for _ in 0..<60 {
            try await Task.sleep(for: .seconds(1))
            let now = try Holdings(pid: pid)
            if let baseline, now.fds <= baseline.fds + Self.fdSlack, now.threads <= baseline.threads + Self.threadSlack
            {
                return now
            }
            if baseline == nil, now.fds == last.fds, now.threads == last.threads { return now }
            last = now
        }
        return last
    }
}

/// Counts lines of a daemon's log as it grows, reading only what was added since the last look.
final class LogCounter: @unchecked Sendable {
    private let handle: FileHandle?
    private var counts: [String: Int] = [:]
    private var pending = ""

    init(path: String) {
        handle = FileHandle(forReadingAtPath: path)
    }

    /// Waits (up to a minute) until `text` was logged `count` times; throws with the log's tail otherwise.
    func waitFor(_ text: String, count: Int, daemon: DaemonProcess) async throws {
        for _ in 0..<6000 {
            if let data = try handle?.readToEnd(), !data.isEmpty {
                pending += String(decoding: data, as: UTF8.self)
                var lines = pending.split(separator: "\n", omittingEmptySubsequences: false)
                pending = String(lines.removeLast())
                for line in lines {
                    for key in ["device removed", "device connected"] where line.contains(key) {
                        counts[key, default: 0] += 1
                    }
                }
            }
            if counts[text, default: 0] >= count { return }
            guard daemon.process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestingError(
            "the daemon did not log '\(text)' \(count) times (\(counts[text, default: 0])):\n\(daemon.log.suffix(4000))"
        )
    }
}
