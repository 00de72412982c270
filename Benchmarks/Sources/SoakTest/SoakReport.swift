import Foundation
import WorkoutProtocol

/// The soak run's figures, as the delimited section of `docs/benchmarks.md` it owns.
struct SoakReport {
    static let startMarker = "<!-- bench:soak:start -->"
    static let endMarker = "<!-- bench:soak:end -->"
    /// Rows of a table over time (the first and the last sample among them): a 2-hour run samples 240 times.
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

    var totalReplies: Int { devices.map(\.replies).reduce(0, +) }
    var repliesPerSecond: Double { Double(totalReplies) / elapsed.inSeconds }

    var markdown: String {
        var text = "\(Self.startMarker)\n## Soak (`make soak`)\n\n"
        text += "Run \(Date().formatted(.iso8601)) on \(ProcessInfo.processInfo.activeProcessorCount) cores: "
        text += "\(options.readingDevices) reading devices + 1 that never reads, one \(options.configuration.map { "\($0) " } ?? "")workoutd, \(Int(elapsed.inSeconds)) s "
        text += "(SOAK_SECONDS=\(Int(options.duration.inSeconds))), replug chance \(options.replugPercent) % per batch. "
        text += "Traffic: valid start/end/share with ids, malformed JSON, unknown commands, invalid fields, invalid UTF-8, "
        text += "4097–20000-byte lines, blank and CRLF lines, written in random 1–8192-byte pieces.\n\n"
        text += "| figure | value |\n|---|---|\n"
        text += "| replies received and checked | \(totalReplies) (\(String(format: "%.0f", repliesPerSecond))/s) |\n"
        text += "| batches | \(devices.map(\.batches).reduce(0, +)) |\n"
        text += "| unplug/replug cycles | \(devices.map(\.replugs).reduce(0, +)) |\n"
        text += "| bytes the never-reading device got in | \(stuckBytesAccepted) (at \(Int(baseline.elapsed.inSeconds)) s: \(baseline.stuckDeviceBytes)) |\n"
        let stored = devices.map(\.storedRecords).reduce(0, +)
        text += "| workouts started + shares queued (kept by the store) | \(stored) |\n"
        text += "| RSS at \(Int(baseline.elapsed.inSeconds)) s → end | \(baseline.residentKiB) KiB → \(final.residentKiB) KiB (\(final.residentKiB - baseline.residentKiB >= 0 ? "+" : "")\(final.residentKiB - baseline.residentKiB) KiB) |\n"
        text += "| RSS min / max over the run | \(samples.map(\.residentKiB).min() ?? 0) / \(samples.map(\.residentKiB).max() ?? 0) KiB |\n"
        text += "| open descriptors start → end | \(samples.first?.openDescriptors ?? 0) → \(final.openDescriptors) (max \(samples.map(\.openDescriptors).max() ?? 0)) |\n"
        text += "| of which under the state directory (SQLite pool, spool) | \(samples.first?.stateDescriptors ?? 0) → \(final.stateDescriptors) (max \(samples.map(\.stateDescriptors).max() ?? 0)) |\n"
        text += "| failures | \(devices.compactMap(\.failure).isEmpty ? "none" : devices.compactMap(\.failure).joined(separator: "; ")) |\n\n"
        text += "RSS, descriptors and the never-reading device's bytes over time:\n\n| t (s) | RSS (KiB) | fds (state dir) | never-reader bytes in |\n|---|---|---|---|\n"
        for sample in SampleSelection.evenlySpaced(samples, count: Self.rowsOverTime) {
            text += "| \(Int(sample.elapsed.inSeconds)) | \(sample.residentKiB) | \(sample.openDescriptors) (\(sample.stateDescriptors)) | \(sample.stuckDeviceBytes) |\n"
        }
        text += "\nVerdict: **\(passed ? "PASS" : "FAIL")** — \(verdicts.joined(separator: "; ")).\n\(Self.endMarker)\n"
        return text
    }

    /// Replaces the soak section of the file at `path` (or appends one), leaving the rest alone.
    func write(to path: String) throws {
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Benchmarks\n"
        var updated: String
        if let start = existing.range(of: Self.startMarker), let end = existing.range(of: Self.endMarker), start.lowerBound < end.lowerBound {
            var after = existing[end.upperBound...]
            if after.first == "\n" { after = after.dropFirst() }
            updated = existing[..<start.lowerBound] + markdown + after
        } else {
            updated = existing + (existing.hasSuffix("\n\n") ? "" : existing.hasSuffix("\n") ? "\n" : "\n\n") + markdown
        }
        try updated.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

