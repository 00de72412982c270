// `make bench`, pty part: pipelined throughput and single-flight latency of workoutd through a real pty,
// beside the C echo baseline driven the same way in the same run, with the ratios and the floors
// (Benchmarks/Thresholds/PART.json, PART from --thresholds, default pty).
// The figures are the product: a missed floor prints MISS but does not fail the run (`make bench-check` fails on
// it); a wrong or missing reply does (exit 1), since figures from a daemon that answers wrongly mean nothing.
import BenchmarkSupport
import Foundation

let options: BenchmarkOptions
do {
    options = try BenchmarkOptions.parse(CommandLine.arguments.dropFirst())
} catch {
    FileHandle.standardError.write(Data("WorkoutdBenchmarks: \(error)\n\(BenchmarkOptions.usage)\n".utf8))
    exit(64)
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("WorkoutdBenchmarks: \(text)\n".utf8))
}

/// `--count`: the cost of a command to each program.
///
/// Measured in turn round by round, then a profile of each workoutd store.
func countCost(_ options: BenchmarkOptions) throws {
    guard let baseline = options.baseline else { exit(64) }
    var programs: [(key: String, specification: ProgramUnderTest.Specification, matchIDs: Bool)] = [
        ("echo", baseline, false)
    ]
    // The transport alone: how much of a command's cost is the event loop's, before any protocol work.
    if let transport = options.references.first { programs.append(("transport_echo", transport, false)) }
    // Waiting for readiness without NIO's loop: splits the transport's cost into the kernel's and the loop's.
    if let epoll = options.epollEcho { programs.append(("epoll_echo", epoll, false)) }
    // The protocol without NIO: the session answering in place on a loop of its own (its replies are checked).
    if let session = options.sessionBehindEpoll { programs.append(("session_epoll", session, true)) }
    if let echo = options.durableEcho { programs.append(("durable_echo", echo, false)) }
    // The durable protocol without NIO: the session committing to workoutd's store in place on a loop of its own.
    if let session = options.durableSessionBehindEpoll { programs.append(("session_epoll_durable", session, true)) }
    if let peer = options.durablePeer { programs.append(("python_peer", peer, false)) }
    if let subject = options.subjects.first { programs.append(("in_memory", subject, true)) }
    if let durable = options.durableSubjects.first { programs.append(("durable", durable, true)) }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("workoutd-cost-\(getpid())").path
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: work) }
    progress("counting, round by round: \(programs.map(\.specification.name).joined(separator: ", "))")
    let results = try CommandCost.run(
        programs.map { ($0.specification, $0.matchIDs) },
        options: options,
        settings: .init(mallocShim: options.mallocShim, workDirectory: work, perfStat: options.perfStat)
    )
    let table = CommandCostTable(
        rows: zip(programs, results).map { .init(key: $0.0.key, result: $0.1) },
        thresholds: try Thresholds.load(part: options.thresholdsPart)
    )
    if let directory = options.profileDirectory {
        for program in programs where program.key == "in_memory" || program.key == "durable" {
            progress("profiling \(program.specification.name)")
            let file = program.key.replacingOccurrences(of: "_", with: "-")
            try CommandCost.profile(program.specification, options: options, output: "\(directory)/\(file).data")
        }
    }
    print(table.markdown, terminator: "")
    try Thresholds.writeMetrics(table.metrics)
    for floor in table.floors {
        progress(
            "\(floor.passed ? "PASS" : "MISS") \(floor.label) = \(String(format: "%.3f", floor.value)) (\(floor.requirement))"
        )
    }
}

if options.countCost {
    do {
        try countCost(options)
    } catch {
        progress("\(error)")
        exit(1)
    }
    exit(0)
}

do {
    func run(_ specification: ProgramUnderTest.Specification, matchIDs: Bool) throws -> ProgramFigures {
        progress("measuring \(specification.name)")
        let figures = try ProgramBenchmark.run(specification, options: options, matchIDs: matchIDs)
        progress(
            "  \(Int(figures.throughput.commandsPerSecond)) commands/s, p99 \(figures.latency.microseconds(atPercentile: 99)) µs"
        )
        return figures
    }
    // BenchmarkOptions.parse guarantees a baseline.
    guard let baselineSpecification = options.baseline else { exit(64) }
    let baseline = try run(baselineSpecification, matchIDs: false)
    let references = try options.references.map { try run($0, matchIDs: false) }
    let durableEcho = try options.durableEcho.map { try run($0, matchIDs: false) }
    let durablePeer = try options.durablePeer.map { try run($0, matchIDs: false) }
    let subjects = try options.subjects.map { try run($0, matchIDs: true) }
    var durable = try options.durableSubjects.dropLast(options.replicatedSubjects.isEmpty ? 0 : 1).map {
        try run($0, matchIDs: true)
    }
    // A replicated subject is held to a ratio against the last durable one: measured with it in turn, round by round.
    var replicated: [ProgramFigures] = []
    if let unreplicated = options.durableSubjects.last, !options.replicatedSubjects.isEmpty {
        let names = ([unreplicated] + options.replicatedSubjects).map(\.name).joined(separator: ", ")
        progress("measuring in turn: \(names)")
        let pair = try ProgramBenchmark.run(
            ([unreplicated] + options.replicatedSubjects).map { ($0, true) },
            options: options
        )
        durable.append(pair[0])
        replicated = Array(pair.dropFirst())
        for figures in pair {
            progress(
                "  \(figures.name): \(Int(figures.throughput.commandsPerSecond)) commands/s, p99 \(figures.latency.microseconds(atPercentile: 99)) µs"
            )
        }
    } else {
        replicated = try options.replicatedSubjects.map { try run($0, matchIDs: true) }
    }
    let table = BenchmarkTable(
        options: options,
        baseline: baseline,
        references: references,
        subjects: subjects,
        durableSubjects: durable,
        replicatedSubjects: replicated,
        durableEcho: durableEcho,
        durablePeer: durablePeer,
        thresholds: try Thresholds.load(part: options.thresholdsPart)
    )
    print(table.markdown, terminator: "")
    try Thresholds.writeMetrics(table.metrics)
    for floor in table.floors {
        progress(
            "\(floor.passed ? "PASS" : "MISS") \(floor.label) = \(String(format: "%.3f", floor.ratio)) (\(floor.requirement))"
        )
    }
} catch {
    progress("\(error)")
    exit(1)
}
