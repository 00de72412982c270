import Foundation
import WorkoutProtocol

/// The figures of one run, as the markdown table `make bench` prints.
struct BenchmarkReport {
    static let p99Floor: Duration = .milliseconds(50)
    static let ratioFloor = 0.8

    var plugs: Int
    var latencies: [Duration]
    var devices: Int
    var commandsPerDevice: Int
    var singleDevicePerSecond: Double
    var aggregatePerSecond: Double

    var ratio: Double { aggregatePerSecond / singleDevicePerSecond }
    var p50: Duration { percentile(0.50) }
    var p99: Duration { percentile(0.99) }
    var meetsFloors: Bool { p99 < Self.p99Floor && ratio >= Self.ratioFloor }

    var markdown: String {
        let sorted = latencies.sorted()
        return """
            | hotplug (umockdev, \(plugs) plugs) | value | floor |
            |---|---:|---:|
            | udev add → first ack, p50 | \(milliseconds(p50)) ms | |
            | udev add → first ack, p99 | \(milliseconds(p99)) ms | < \(milliseconds(Self.p99Floor)) ms \(p99 < Self.p99Floor ? "ok" : "MISS") |
            | udev add → first ack, max | \(milliseconds(sorted.last ?? .zero)) ms | |
            | 1 device, commands/s | \(Int(singleDevicePerSecond)) | |
            | \(devices) devices at once, aggregate commands/s | \(Int(aggregatePerSecond)) | |
            | aggregate / single | \(String(format: "%.2f", ratio)) | ≥ \(Self.ratioFloor) \(ratio >= Self.ratioFloor ? "ok" : "MISS") |

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
