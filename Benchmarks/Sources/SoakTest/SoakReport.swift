import Foundation
import WorkoutProtocol

/// The soak run's figures, as the delimited section of `docs/benchmarks.md` it owns.
struct SoakReport {
    static let startMarker = "<!-- bench:soak:start -->"
    static let endMarker = "<!-- bench:soak:end -->"
    /// Rows of a table over time (the first and the last sample among them).
    ///
    /// A 2-hour run samples 240 times.
    static let rowsOverTime = 8

    var options: SoakOptions
    var elapsed: Duration
    var devices: [SoakDevice.Tally]
    var stuckBytesAccepted: Int
    var samples: [ProcessSample]
    var baseline: ProcessSample
    var final: ProcessSample
    var verdicts: [String]
    var passed: Bool
    /// Whether the report has its table over time.
    ///
    /// In long mode the long-mode section's drift rows give RSS and descriptors over the run's hours instead.
    var showsOverTime = true

    var totalReplies: Int { devices.map(\.replies).reduce(0, +) }
    var repliesPerSecond: Double { Double(totalReplies) / elapsed.inSeconds }

    var markdown: String {
        var text = "\(Self.startMarker)\n## Soak (`make soak`)\n"
        text += "Run \(Date().formatted(.iso8601)) on \(ProcessInfo.processInfo.activeProcessorCount) cores: "
        text +=
            "\(options.readingDevices) reading devices + 1 that never reads, one \(options.configuration.map { "\($0) " } ?? "")workoutd, \(Int(elapsed.inSeconds)) s "
        text +=
            "(SOAK_SECONDS=\(Int(options.duration.inSeconds))), replug chance \(options.replugPercent) % per batch. "
        text +=
            "Traffic: valid start/end/share with ids, malformed JSON, unknown commands, invalid fields, invalid UTF-8, "
        text += "4097–20000-byte lines, blank and CRLF lines, written in random 1–8192-byte pieces.\n"
        // The figures as one sentence: the verdict below says which of them decide.
        let residentKiB = samples.map(\.residentKiB)
        let growth = final.residentKiB - baseline.residentKiB
        let settled = Int(baseline.elapsed.inSeconds)
        let failures = devices.compactMap(\.failure)
        text +=
            "\(totalReplies) replies received and checked (\(String(format: "%.0f", repliesPerSecond))/s, in \(devices.map(\.batches).reduce(0, +)) batches); "
        text +=
            "\(devices.map(\.replugs).reduce(0, +)) unplug/replug cycles; the never-reading device got \(stuckBytesAccepted) bytes in (\(baseline.stuckDeviceBytes) at \(settled) s); "
        text += "\(devices.map(\.storedRecords).reduce(0, +)) workouts started + shares queued kept by the store; "
        text +=
            "RSS \(baseline.residentKiB) → \(final.residentKiB) KiB from \(settled) s to the end (\(growth >= 0 ? "+" : "")\(growth) KiB; min / max over the run "
        text +=
            "\(residentKiB.min() ?? 0) / \(residentKiB.max() ?? 0) KiB); open descriptors \(samples.first?.openDescriptors ?? 0) → \(final.openDescriptors) "
        text +=
            "(max \(samples.map(\.openDescriptors).max() ?? 0)), of them under the state directory (SQLite pool, spool) "
        text +=
            "\(samples.first?.stateDescriptors ?? 0) → \(final.stateDescriptors) (max \(samples.map(\.stateDescriptors).max() ?? 0)); "
        text += "failures: \(failures.isEmpty ? "none" : failures.joined(separator: "; ")).\n"
        if showsOverTime {
            text +=
                "\nRSS, descriptors and the never-reading device's bytes over time:\n\n| t (s) | RSS (KiB) | fds (state dir) | never-reader bytes in |\n|---|---|---|---|\n"
            for sample in SampleSelection.evenlySpaced(samples, count: Self.rowsOverTime) {
                text +=
                    "| \(Int(sample.elapsed.inSeconds)) | \(sample.residentKiB) | \(sample.openDescriptors) (\(sample.stateDescriptors)) | \(sample.stuckDeviceBytes) |\n"
            }
        }
        // The verdict closes the figures' paragraph, or follows the table over time after a blank line.
        text +=
            "\(showsOverTime ? "\n" : "")Verdict: **\(passed ? "PASS" : "FAIL")** — \(verdicts.joined(separator: "; ")).\n\(Self.endMarker)\n"
        return text
    }

    /// Replaces the soak section of the file at `path` (or appends one), leaving the rest alone.
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
