import Foundation
import Synchronization
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// Reply latencies of the batches answered since the last sample, for its percentiles.
final class ReplyLatency: Sendable {
    static let shared = ReplyLatency()
    private let pending = Mutex<[Double]>([])

    func record(_ latency: Duration) {
        pending.withLock { $0.append(latency.inSeconds * 1000) }
    }

    /// The 50th and 99th percentile (ms) of what was recorded since the last call, and forgets it.
    func drain() -> (p50: Double, p99: Double) {
        let values = pending.withLock { values in
            defer { values.removeAll(keepingCapacity: true) }
            return values.sorted()
        }
        guard !values.isEmpty else { return (0, 0) }
        func percentile(_ p: Double) -> Double { values[min(values.count - 1, Int(Double(values.count - 1) * p))] }
        return (percentile(0.5), percentile(0.99))
    }
}

/// What long mode adds around the daemon.
///
/// Replication to a real PostgreSQL that goes away now and then, and configuration reloads (SIGHUP), each on a thread
/// of its own until the deadline.
final class LongModeHarness: @unchecked Sendable {
    let cluster: PostgresCluster
    private(set) var outages = 0
    private(set) var reloads = 0

    init() throws {
        cluster = try PostgresCluster()
    }

    /// The daemon's configuration: replication on, shares spooled (the default sink), devices at notice.
    func configuration(in directory: String) throws -> String {
        let password = try cluster.writePasswordFile(in: directory)
        let file = directory + "/workoutd.yaml"
        try """
        log_level: notice
        discovery:
          enabled: false
        replication:
          postgres_url: "\(cluster.url())"
          password_file: "\(password)"
          hub_id: "soak-long"

        """.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    func run(
        until deadline: ContinuousClock.Instant,
        options: SoakOptions,
        daemon: DaemonProcess,
        finished: DispatchGroup
    ) {
        finished.enter()
        Thread { [self] in
            while ContinuousClock.now + options.outageEvery < deadline {
                Thread.sleep(forTimeInterval: options.outageEvery.inSeconds)
                guard (try? cluster.stop(immediate: true)) != nil else { continue }
                outages += 1
                Thread.sleep(forTimeInterval: options.outageLength.inSeconds)
                try? cluster.start()
            }
            finished.leave()
        }.start()
        finished.enter()
        Thread { [self] in
            while ContinuousClock.now + options.reloadEvery < deadline {
                Thread.sleep(forTimeInterval: options.reloadEvery.inSeconds)
                daemon.signal(SIGHUP)
                reloads += 1
            }
            finished.leave()
        }.start()
    }

    /// Workouts the central store holds for this hub (after the run, PostgreSQL up).
    func centralWorkouts() -> Int {
        (try? cluster.count("SELECT count(*) FROM workouts WHERE hub_id = 'soak-long'")) ?? -1
    }
}

/// The per-hour drift of a long run.
///
/// The difference between the samples an hour apart, as the delimited section of `docs/benchmarks.md` it owns. A run
/// shorter than an hour gets one row for the whole run, scaled to an hour; a longer one a row per hour, its last hour
/// included (`SampleSelection.hours`).
struct DriftReport {
    static let startMarker = "<!-- bench:soak-long:start -->"
    static let endMarker = "<!-- bench:soak-long:end -->"

    var samples: [ProcessSample]
    var elapsed: Duration
    var options: SoakOptions
    var outages: Int
    var reloads: Int
    var replugs: Int
    var replies: Int
    var centralWorkouts: Int
    var passed: Bool

    struct Row {
        var label: String
        var rssKiB: Double, fds: Double, threads: Double, databaseKiB: Double, walKiB: Double, p99: Double
    }

    var rows: [Row] {
        guard let last = samples.last else { return [] }
        // After the first minute (allocator and caches settling), as the short mode does.
        let startIndex = samples.firstIndex { $0.elapsed >= .seconds(60) } ?? 0
        let start = samples[startIndex]
        func row(_ label: String, _ a: ProcessSample, _ b: ProcessSample, scale: Double) -> Row {
            Row(
                label: label,
                rssKiB: Double(b.residentKiB - a.residentKiB) * scale,
                fds: Double(b.openDescriptors - a.openDescriptors) * scale,
                threads: Double(b.threads - a.threads) * scale,
                databaseKiB: Double(b.databaseBytes - a.databaseBytes) / 1024 * scale,
                walKiB: Double(b.walBytes - a.walBytes) / 1024 * scale,
                p99: b.latencyP99Milliseconds - a.latencyP99Milliseconds
            )
        }
        let hours = (last.elapsed - start.elapsed).inSeconds / 3600
        guard hours >= 1 else { return [row("whole run, per hour", start, last, scale: hours > 0 ? 1 / hours : 0)] }
        return SampleSelection.hours(elapsed: samples.map(\.elapsed), start: startIndex).enumerated().map {
            hour,
            span in
            let (from, to) = (samples[span.from], samples[span.to])
            return row(
                "hour \(hour + 1) (\(Int(from.elapsed.inSeconds))–\(Int(to.elapsed.inSeconds)) s)",
                from,
                to,
                scale: 1
            )
        }
    }

    var markdown: String {
        var text = "\(Self.startMarker)\n## Soak, long mode (`make soak SOAK=long`)\n"
        text +=
            "Run \(Date().formatted(.iso8601)), \(Int(elapsed.inSeconds)) s on \(ProcessInfo.processInfo.activeProcessorCount) cores, "
        text +=
            "\(options.readingDevices) reading devices + 1 never reading, replug chance \(options.replugPercent) % per batch "
        text += "(\(replugs) replugs), shares spooled, replication to a real PostgreSQL stopped \(outages) times for "
        text += "\(Int(options.outageLength.inSeconds)) s, \(reloads) reloads (SIGHUP); \(replies) replies checked, "
        text += "\(centralWorkouts) workouts in the central table at the end. "
        text += "Verdict of the run's checks: **\(passed ? "PASS" : "FAIL")** (see the soak section above). "
        text +=
            "Drift: the later sample minus the earlier (latency: the change of the 99th percentile of batch replies).\n\n"
        text +=
            "| span | RSS (KiB) | fds | threads | database (KiB) | WAL (KiB) | reply p99 (ms) |\n|---|---|---|---|---|---|---|\n"
        for row in rows {
            text +=
                "| \(row.label) | \(f(row.rssKiB)) | \(f(row.fds)) | \(f(row.threads)) | \(f(row.databaseKiB)) | \(f(row.walKiB)) | \(f(row.p99)) |\n"
        }
        text += "\(Self.endMarker)\n"
        return text
    }

    private func f(_ value: Double) -> String { String(format: value.magnitude >= 100 ? "%+.0f" : "%+.1f", value) }

    /// Replaces the long-mode section of the file at `path` (or appends one), leaving the rest alone.
    func write(to path: String) throws {
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Benchmarks\n"
        var updated: String
        if let start = existing.range(of: Self.startMarker), let end = existing.range(of: Self.endMarker),
            start.lowerBound < end.lowerBound
        {
            var after = existing[end.upperBound...]
            if after.first == "\n" { after = after.dropFirst() }
            updated = existing[..<start.lowerBound] + markdown + after
        } else {
            updated = existing + (existing.hasSuffix("\n\n") ? "" : existing.hasSuffix("\n") ? "\n" : "\n\n") + markdown
        }
        try updated.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
