import Foundation
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// What one single-flight command costs the program serving it (`--count`): CPU, mallocs, instructions.
///
/// CPU is user and system time of every thread, from `/proc/PID/stat` (it includes threads that exited) before and
/// after the measured round trips. Mallocs come from the malloc-count shim (Benchmarks/peers/malloc-count.c) loaded
/// into the program, which keeps its count in a file the benchmark reads. Instructions come from `perf stat` attached
/// to the program, where the machine counts them. Each is divided by the number of round trips.
enum CommandCost {
    /// One start of one program: the measured round trips and what they cost it.
    struct Round {
        var commands = 0
        var userSeconds = 0.0
        var systemSeconds = 0.0
        var mallocs: Double?
        var userInstructions: Double?
        var kernelInstructions: Double?
    }

    struct Result {
        var name: String
        var rounds: [Round]

        /// Totals over every round divided by every round's commands: fewer clock ticks lost to rounding.
        private func perCommand(_ value: (Round) -> Double?) -> Double? {
            let values = rounds.compactMap(value)
            guard values.count == rounds.count, !rounds.isEmpty else { return nil }
            return values.reduce(0, +) / Double(rounds.reduce(0) { $0 + $1.commands })
        }

        var userMicroseconds: Double { (perCommand { $0.userSeconds } ?? 0) * 1e6 }
        var systemMicroseconds: Double { (perCommand { $0.systemSeconds } ?? 0) * 1e6 }
        var cpuMicroseconds: Double { userMicroseconds + systemMicroseconds }
        var mallocs: Double? { perCommand(\.mallocs) }
        var userInstructions: Double? { perCommand(\.userInstructions) }
        var kernelInstructions: Double? { perCommand(\.kernelInstructions) }
        /// The CPU per command of each round, for the spread.
        var cpuMicrosecondsPerRound: [Double] {
            rounds.map { ($0.userSeconds + $0.systemSeconds) / Double($0.commands) * 1e6 }
        }
    }

    struct Settings {
        /// The malloc-count shim, loaded into every program measured.
        var mallocShim: String?
        /// Where the shim's counter files go.
        var workDirectory: String
        var perfStat: Bool
    }

    /// Measures the programs round by round in turn (A, B, C, A, B, C…), each round a fresh start.
    static func run(
        _ programs: [(specification: ProgramUnderTest.Specification, matchIDs: Bool)],
        options: BenchmarkOptions,
        settings: Settings
    ) throws -> [Result] {
        var mixes = Array(repeating: CommandMix(), count: programs.count)
        var rounds = Array(repeating: [Round](), count: programs.count)
        for round in 1...options.throughputRounds {
            for (index, program) in programs.enumerated() {
                let warmUp = mixes[index].next(options.warmUpRoundTrips)
                let commands = mixes[index].next(options.roundTrips)
                let counterPath = "\(settings.workDirectory)/mallocs-\(index)-\(round)"
                var environment: [String: String] = [:]
                if let shim = settings.mallocShim {
                    environment = ["LD_PRELOAD": shim, "MALLOC_COUNT_FILE": counterPath]
                }
                let specification = program.specification
                let measuredRound = try ProgramBenchmark.withFreshProgram(
                    specification,
                    run: round,
                    environment: environment
                ) { master, process -> Round in
                    try ProgramBenchmark.measured(specification, process) { () -> Round in
                        _ = try SingleFlightLatency.measure(master, warmUp: warmUp, commands: [])
                        let perf: PerfStat? =
                            try settings.perfStat ? PerfStat(pid: process.pid, work: settings.workDirectory) : nil
                        let mallocsBefore: UInt64? = try settings.mallocShim == nil ? nil : readCounter(counterPath)
                        let before = try ProcessTimes(pid: process.pid)
                        let latency = try SingleFlightLatency.measure(master, warmUp: [], commands: commands)
                        let after = try ProcessTimes(pid: process.pid)
                        let mallocsAfter: UInt64? = try settings.mallocShim == nil ? nil : readCounter(counterPath)
                        let instructions = try perf?.stop()
                        try ReplyCheck.verify(latency.replies, against: commands, matchIDs: program.matchIDs)
                        var cost = Round()
                        cost.commands = commands.count
                        cost.userSeconds = after.userSeconds - before.userSeconds
                        cost.systemSeconds = after.systemSeconds - before.systemSeconds
                        if let mallocsBefore, let mallocsAfter {
                            cost.mallocs = Double(mallocsAfter - mallocsBefore)
                        }
                        cost.userInstructions = instructions?.user
                        cost.kernelInstructions = instructions?.kernel
                        return cost
                    }
                }
                progress(
                    "  \(specification.name): \(String(format: "%.1f", (measuredRound.userSeconds + measuredRound.systemSeconds) / Double(measuredRound.commands) * 1e6)) µs CPU/command"
                        + (measuredRound.mallocs.map {
                            String(format: ", %.1f mallocs/command", $0 / Double(measuredRound.commands))
                        } ?? "")
                )
                rounds[index].append(measuredRound)
            }
        }
        return zip(programs, rounds).map { Result(name: $0.0.specification.name, rounds: $0.1) }
    }

    /// The shim's count: the first 8 bytes of its file, in this machine's byte order.
    private static func readCounter(_ path: String) throws -> UInt64 {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw TestingError("no malloc count at \(path): the shim did not load (LD_PRELOAD)")
        }
        defer { close(descriptor) }
        var value: UInt64 = 0
        guard pread(descriptor, &value, MemoryLayout<UInt64>.size, 0) == MemoryLayout<UInt64>.size else {
            throw TestingError("short malloc count at \(path)")
        }
        return value
    }
}

/// User and system time of a whole process (every thread, living or exited), from `/proc/PID/stat`.
struct ProcessTimes {
    var userSeconds: Double
    var systemSeconds: Double

    init(pid: pid_t) throws {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
        guard let end = text.lastIndex(of: ")") else { throw TestingError("unexpected /proc/\(pid)/stat: \(text)") }
        let fields = text[text.index(after: end)...].split(separator: " ")
        // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw TestingError("unexpected /proc/\(pid)/stat: \(text)")
        }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        userSeconds = user / ticks
        systemSeconds = system / ticks
    }
}

/// `perf stat` counting a process's user and kernel instructions, from attach until `stop()`.
struct PerfStat {
    private let process = Process()
    private let output: String

    init(pid: pid_t, work: String) throws {
        output = "\(work)/perf-stat-\(pid)"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "perf", "stat", "-x", ",", "-e", "instructions:u,instructions:k", "-p", "\(pid)", "-o", output,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // perf opens its counters a moment after it starts; round trips before that would go uncounted.
        usleep(300_000)
    }

    /// Stops counting; nil for an event the machine cannot count (a container or a VM without a PMU).
    func stop() throws -> (user: Double?, kernel: Double?) {
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        var user: Double?
        var kernel: Double?
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 2, let value = Double(fields[0]) else { continue }
            if fields[2].hasPrefix("instructions:u") { user = value }
            if fields[2].hasPrefix("instructions:k") { kernel = value }
        }
        return (user, kernel)
    }
}

extension CommandCost {
    /// A `perf record -g` profile of a single-flight run, after its warm-up.
    ///
    /// Written to `output`.
    ///
    /// Apart from the counting rounds: the sampling costs the program CPU of its own.
    static func profile(
        _ specification: ProgramUnderTest.Specification,
        options: BenchmarkOptions,
        output: String
    ) throws {
        var mix = CommandMix()
        let warmUp = mix.next(options.warmUpRoundTrips)
        let commands = mix.next(options.roundTrips)
        try ProgramBenchmark.withFreshProgram(specification, run: options.throughputRounds + 1) { master, process in
            try ProgramBenchmark.measured(specification, process) {
                _ = try SingleFlightLatency.measure(master, warmUp: warmUp, commands: [])
                let perf = Process()
                perf.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                perf.arguments = ["perf", "record", "-g", "-F", "2000", "-p", "\(process.pid)", "-o", output]
                perf.standardOutput = FileHandle.nullDevice
                perf.standardError = FileHandle.nullDevice
                try perf.run()
                usleep(500_000)
                let latency = try SingleFlightLatency.measure(master, warmUp: [], commands: commands)
                kill(perf.processIdentifier, SIGINT)
                perf.waitUntilExit()
                try ReplyCheck.verify(latency.replies, against: commands, matchIDs: true)
            }
        }
    }
}
