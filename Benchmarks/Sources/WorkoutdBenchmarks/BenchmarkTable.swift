import BenchmarkSupport
import Foundation

/// The markdown `make bench` prints and records.
///
/// Figures per program, then each floor with PASS or MISS.
struct BenchmarkTable {
    var options: BenchmarkOptions
    var baseline: ProgramFigures
    /// Programs measured like the baseline for comparison, held to nothing.
    ///
    /// For example the daemon's transport alone.
    var references: [ProgramFigures]
    var subjects: [ProgramFigures]
    var durableSubjects: [ProgramFigures]
    /// Held against the last durable subject, or the first subject without one.
    ///
    /// The last durable subject is the same store with replication off.
    var replicatedSubjects: [ProgramFigures] = []
    /// The anchors for the first durable subject (``BenchmarkOptions/durableEcho``).
    var durableEcho: ProgramFigures? = nil
    var durablePeer: ProgramFigures? = nil
    /// The floors the ratios are held to (`Benchmarks/Thresholds/PART.json`).
    var thresholds: Thresholds

    /// One ratio a floor may hold, under the metric name the thresholds file uses.
    struct Ratio {
        var metric: String
        var label: String
        var value: Double
    }

    /// Every ratio with a metric name, in the order the table gives them.
    var ratios: [Ratio] {
        var ratios: [Ratio] = []
        guard let reference = subjects.first else { return [] }
        let throughput = reference.throughput.commandsPerSecond / baseline.throughput.commandsPerSecond
        ratios.append(
            Ratio(
                metric: "throughput_in_memory_over_echo",
                label: "throughput \(reference.name) / \(baseline.name)",
                value: throughput
            )
        )
        let p99 = reference.latency.microseconds(atPercentile: 99) / baseline.latency.microseconds(atPercentile: 99)
        ratios.append(
            Ratio(
                metric: "p99_in_memory_over_echo",
                label: "p99 latency \(reference.name) / \(baseline.name)",
                value: p99
            )
        )
        // Latency is also held against the echo over workoutd's own transport, measured as the first reference.
        if let transport = references.first {
            for percentile in [50.0, 99.0] {
                let ratio =
                    reference.latency.microseconds(atPercentile: percentile)
                    / transport.latency.microseconds(atPercentile: percentile)
                ratios.append(
                    Ratio(
                        metric: "p\(Int(percentile))_in_memory_over_transport_echo",
                        label: "p\(Int(percentile)) latency \(reference.name) / \(transport.name)",
                        value: ratio
                    )
                )
            }
        }
        for durable in durableSubjects {
            ratios.append(
                Ratio(
                    metric: "throughput_durable_over_in_memory",
                    label: "throughput \(durable.name) / \(reference.name)",
                    value: durable.throughput.commandsPerSecond / reference.throughput.commandsPerSecond
                )
            )
        }
        if let durable = durableSubjects.first {
            ratios += durableRatios(durable)
        }
        let unreplicated = durableSubjects.last ?? reference
        for replicated in replicatedSubjects {
            ratios.append(
                Ratio(
                    metric: "throughput_replicated_over_unreplicated",
                    label: "throughput \(replicated.name) / \(unreplicated.name)",
                    value: replicated.throughput.commandsPerSecond / unreplicated.throughput.commandsPerSecond
                )
            )
        }
        return ratios
    }

    /// The durable store against the physical limit of acked-means-durable and the Python peer.
    private func durableRatios(_ durable: ProgramFigures) -> [Ratio] {
        var ratios: [Ratio] = []
        if let echo = durableEcho {
            for percentile in [50.0, 99.0] {
                let ratio =
                    durable.latency.microseconds(atPercentile: percentile)
                    / echo.latency.microseconds(atPercentile: percentile)
                ratios.append(
                    Ratio(
                        metric: "p\(Int(percentile))_durable_over_durable_echo",
                        label: "p\(Int(percentile)) latency \(durable.name) / \(echo.name)",
                        value: ratio
                    )
                )
            }
            ratios.append(
                Ratio(
                    metric: "throughput_durable_over_durable_echo",
                    label: "throughput \(durable.name) / \(echo.name)",
                    value: durable.throughput.commandsPerSecond / echo.throughput.commandsPerSecond
                )
            )
        }
        if let peer = durablePeer {
            ratios.append(
                Ratio(
                    metric: "p50_durable_over_python_peer",
                    label: "p50 latency \(durable.name) / \(peer.name)",
                    value: durable.latency.microseconds(atPercentile: 50) / peer.latency.microseconds(atPercentile: 50)
                )
            )
        }
        return ratios
    }

    /// Each floor's verdict, for the table and the summary lines.
    ///
    /// One row per ratio and floor set on its metric.
    var floors: [(label: String, ratio: Double, requirement: String, passed: Bool)] {
        ratios.flatMap { ratio in
            thresholds.floors(on: ratio.metric).map { floor in
                (
                    ratio.label + (floor.origin.map { " (\($0))" } ?? ""), ratio.value, floor.requirement,
                    floor.isMet(by: ratio.value)
                )
            }
        }
    }

    /// The figures recorded for `make bench-check`.
    ///
    /// A metric measured more than once (several durable stores) records the value furthest from its floor.
    var metrics: [String: Double] {
        var metrics: [String: Double] = [:]
        for ratio in ratios {
            guard let previous = metrics[ratio.metric] else {
                metrics[ratio.metric] = ratio.value
                continue
            }
            let heldFromBelow = thresholds.floors(on: ratio.metric).contains { $0.min != nil }
            metrics[ratio.metric] = heldFromBelow ? Swift.min(previous, ratio.value) : Swift.max(previous, ratio.value)
        }
        return metrics
    }

    var markdown: String {
        let commands = CommandMix.wholeCycles(options.pipelinedCommands)
        var text = """
            Pipelined: \(commands) commands (start/end/share cycles, every command with an id) written as fast as the \
            pty takes them while a second thread reads the replies; median of \(options.throughputRounds) rounds, \
            every reply checked. Single-flight: \(CommandMix.wholeCycles(options.roundTrips)) round trips (one command, \
            wait for its reply) after \(CommandMix.wholeCycles(options.warmUpRoundTrips)) unrecorded ones.

            | program | commands/s | MB/s in | MB/s out | rounds (commands/s) | p50 µs | p99 µs | p99.9 µs | max µs |
            |---|---:|---:|---:|---|---:|---:|---:|---:|

            """
        let anchors = [durableEcho, durablePeer].compactMap { $0 }
        for figures in [baseline] + references + anchors + subjects + durableSubjects + replicatedSubjects {
            let t = figures.throughput
            let l = figures.latency
            text += "| \(figures.name) | \(Int(t.commandsPerSecond.rounded())) | \(format(t.megabytesPerSecondIn)) | "
            text +=
                "\(format(t.megabytesPerSecondOut)) | \(figures.throughputRounds.map { String(Int($0.rounded())) }.joined(separator: ", ")) | "
            text +=
                "\(format(l.microseconds(atPercentile: 50), digits: 1)) | \(format(l.microseconds(atPercentile: 99), digits: 1)) | "
            text +=
                "\(format(l.microseconds(atPercentile: 99.9), digits: 1)) | \(format(Double(l.histogram.max) / 1000, digits: 1)) |\n"
        }
        text += "\n| ratio | measured | floor | result |\n|---|---:|---:|---|\n"
        for floor in floors {
            text +=
                "| \(floor.label) | \(format(floor.ratio, digits: 3)) | \(floor.requirement) | \(floor.passed ? "PASS" : "MISS") |\n"
        }
        for subject in references + subjects.dropFirst() + durableSubjects + replicatedSubjects {
            let throughput = subject.throughput.commandsPerSecond / baseline.throughput.commandsPerSecond
            let p99 = subject.latency.microseconds(atPercentile: 99) / baseline.latency.microseconds(atPercentile: 99)
            text += "| throughput \(subject.name) / \(baseline.name) | \(format(throughput, digits: 3)) | | |\n"
            text += "| p99 latency \(subject.name) / \(baseline.name) | \(format(p99, digits: 3)) | | |\n"
        }
        return text
    }

    private func format(_ value: Double, digits: Int = 2) -> String {
        String(format: "%.\(digits)f", value)
    }
}
