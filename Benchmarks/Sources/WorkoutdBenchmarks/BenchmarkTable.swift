import Foundation

/// The markdown `make bench` prints and records.
///
/// Figures per program, then each floor with PASS or MISS.
struct BenchmarkTable {
    /// workoutd's pipelined throughput at least this share of the echo baseline's.
    static let throughputFloor = 0.15
    /// workoutd's p99 single-flight latency at most this multiple of the echo baseline's.
    static let latencyCeiling = 1.5
    /// Durable throughput at least this share of the same binary with the in-memory store.
    static let durableThroughputFloor = 0.5
    /// Durable throughput with replication on at least this share of the same store with it off.
    static let replicatedThroughputFloor = 0.9
    /// workoutd's pipelined throughput at least this share of the echo baseline's (CPU per command).
    static let reanchoredThroughputFloor = 0.3
    /// workoutd's single-flight p50 at most this multiple of its own transport's echo.
    ///
    /// The transport's echo is the first reference.
    static let transportP50Ceiling = 1.2
    /// workoutd's single-flight p99 at most this multiple of its own transport's echo.
    static let transportP99Ceiling = 1.3
    /// The durable store's single-flight p50 at most this multiple of the C durable echo's.
    ///
    /// It must also stay below the Python durable peer's, and its p99 at most `durableEchoP99Ceiling` times the
    /// echo's.
    static let durableEchoP50Ceiling = 1.2
    static let durableEchoP99Ceiling = 1.5
    /// Durable pipelined throughput at least this share of the C durable echo's.
    static let durableEchoThroughputFloor = 0.5

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

    /// Each floor's verdict, for the summary line.
    var floors: [(label: String, ratio: Double, requirement: String, passed: Bool)] {
        var floors: [(String, Double, String, Bool)] = []
        guard let reference = subjects.first else { return [] }
        let throughput = reference.throughput.commandsPerSecond / baseline.throughput.commandsPerSecond
        floors.append(
            (
                "throughput \(reference.name) / \(baseline.name)", throughput,
                "≥ \(Self.throughputFloor)", throughput >= Self.throughputFloor
            )
        )
        let p99 = reference.latency.microseconds(atPercentile: 99) / baseline.latency.microseconds(atPercentile: 99)
        floors.append(
            (
                "p99 latency \(reference.name) / \(baseline.name)", p99,
                "≤ \(Self.latencyCeiling)", p99 <= Self.latencyCeiling
            )
        )
        floors.append(
            (
                "throughput \(reference.name) / \(baseline.name) (issue 17)", throughput,
                "≥ \(Self.reanchoredThroughputFloor)", throughput >= Self.reanchoredThroughputFloor
            )
        )
        // Latency is also held against the echo over workoutd's own transport, measured as the first reference.
        if let transport = references.first {
            for (percentile, ceiling) in [(50.0, Self.transportP50Ceiling), (99.0, Self.transportP99Ceiling)] {
                let ratio =
                    reference.latency.microseconds(atPercentile: percentile)
                    / transport.latency.microseconds(atPercentile: percentile)
                floors.append(
                    (
                        "p\(Int(percentile)) latency \(reference.name) / \(transport.name)", ratio,
                        "≤ \(ceiling)", ratio <= ceiling
                    )
                )
            }
        }
        for durable in durableSubjects {
            let ratio = durable.throughput.commandsPerSecond / reference.throughput.commandsPerSecond
            floors.append(
                (
                    "throughput \(durable.name) / \(reference.name)", ratio,
                    "≥ \(Self.durableThroughputFloor)", ratio >= Self.durableThroughputFloor
                )
            )
        }
        if let durable = durableSubjects.first {
            floors += durableFloors(durable)
        }
        let unreplicated = durableSubjects.last ?? reference
        for replicated in replicatedSubjects {
            let ratio = replicated.throughput.commandsPerSecond / unreplicated.throughput.commandsPerSecond
            floors.append(
                (
                    "throughput \(replicated.name) / \(unreplicated.name)", ratio,
                    "≥ \(Self.replicatedThroughputFloor)", ratio >= Self.replicatedThroughputFloor
                )
            )
        }
        return floors
    }

    /// The durable store against the physical limit of acked-means-durable and the Python peer.
    private func durableFloors(_ durable: ProgramFigures) -> [(String, Double, String, Bool)] {
        var floors: [(String, Double, String, Bool)] = []
        if let echo = durableEcho {
            for (percentile, ceiling) in [(50.0, Self.durableEchoP50Ceiling), (99.0, Self.durableEchoP99Ceiling)] {
                let ratio =
                    durable.latency.microseconds(atPercentile: percentile)
                    / echo.latency.microseconds(atPercentile: percentile)
                floors.append(
                    (
                        "p\(Int(percentile)) latency \(durable.name) / \(echo.name) (issue 31)", ratio, "≤ \(ceiling)",
                        ratio <= ceiling
                    )
                )
            }
            let throughput = durable.throughput.commandsPerSecond / echo.throughput.commandsPerSecond
            floors.append(
                (
                    "throughput \(durable.name) / \(echo.name) (issue 31)", throughput,
                    "≥ \(Self.durableEchoThroughputFloor)", throughput >= Self.durableEchoThroughputFloor
                )
            )
        }
        if let peer = durablePeer {
            let ratio = durable.latency.microseconds(atPercentile: 50) / peer.latency.microseconds(atPercentile: 50)
            floors.append(("p50 latency \(durable.name) / \(peer.name) (issue 31)", ratio, "< 1", ratio < 1))
        }
        return floors
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
