import BenchmarkSupport
import Foundation
import WorkoutProtocol

/// The figures of one run, as the markdown table `make bench` prints.
struct BenchmarkReport {
    /// The floors (`Benchmarks/Thresholds/hotplug.json`).
    var thresholds: Thresholds
    var plugs: Int
    var latencies: [Duration]
    var devices: Int
    var commandsPerDevice: Int
    var singleDevicePerSecond: Double
    var aggregatePerSecond: Double

    var ratio: Double { aggregatePerSecond / singleDevicePerSecond }
    var p50: Duration { percentile(0.50) }
    var p99: Duration { percentile(0.99) }
    var p99Milliseconds: Double { p99.inSeconds * 1000 }
    var p99Met: Bool { thresholds.floors(on: "first_ack_p99_ms").allSatisfy { $0.isMet(by: p99Milliseconds) } }
    var ratioMet: Bool { thresholds.floors(on: "aggregate_over_single").allSatisfy { $0.isMet(by: ratio) } }
    var meetsFloors: Bool { p99Met && ratioMet }
    /// The figures recorded for `make bench-check`.
    var metrics: [String: Double] { ["first_ack_p99_ms": p99Milliseconds, "aggregate_over_single": ratio] }

    private func requirement(_ metric: String, unit: String = "") -> String {
        thresholds.floors(on: metric).map { $0.requirement + unit }.joined(separator: ", ")
    }

    var markdown: String {
        let sorted = latencies.sorted()
        return """
            | hotplug (umockdev, \(plugs) plugs) | value | floor |
            |---|---:|---:|
            | udev add → first ack, p50 | \(milliseconds(p50)) ms | |
            | udev add → first ack, p99 | \(milliseconds(p99)) ms | \(requirement("first_ack_p99_ms", unit: " ms")) \(p99Met ? "ok" : "MISS") |
            | udev add → first ack, max | \(milliseconds(sorted.last ?? .zero)) ms | |
            | 1 device, commands/s | \(Int(singleDevicePerSecond)) | |
            | \(devices) devices at once, aggregate commands/s | \(Int(aggregatePerSecond)) | |
            | aggregate / single | \(String(format: "%.2f", ratio)) | \(requirement("aggregate_over_single")) \(ratioMet ? "ok" : "MISS") |

            (\(commandsPerDevice) pipelined commands per device, at most \(Throughput.window) in flight per device.)
            """
    }

    private func percentile(_ fraction: Double) -> Duration {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .zero }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    private func milliseconds(_ duration: Duration) -> String {
        let value = duration.inSeconds * 1000
        return String(format: "%.2f", value)
    }
}
