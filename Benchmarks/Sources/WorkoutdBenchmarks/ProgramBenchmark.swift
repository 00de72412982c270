import Foundation
import WorkoutdTesting

/// One program's figures: the median pipelined round and the single-flight latency distribution.
struct ProgramFigures {
    var name: String
    var throughput: PipelinedThroughput.Result
    var throughputRounds: [Double]
    var latency: SingleFlightLatency.Result
}

/// Runs both measurements against one program on a fresh pty, checking every reply.
enum ProgramBenchmark {
    /// A line every program answers without changing state (workoutd: `nothing_to_share` on a new session).
    private static let probe = #"{"command_type":"share_workout","service":"twitter","id":"bench-probe"}"#

    /// Each pipelined round and the latency run start the program afresh on a new pty.
    ///
    /// So every measurement starts from the same state: no backlog left by the round before (a round queues tens of
    /// thousands of shares, which the daemon goes on delivering in the background).
    static func run(
        _ specification: ProgramUnderTest.Specification,
        options: BenchmarkOptions,
        matchIDs: Bool
    ) throws -> ProgramFigures {
        try run([(specification, matchIDs)], options: options)[0]
    }

    /// Several programs measured round by round in turn (A, B, C, A, B, C…).
    ///
    /// A change in the machine's load during the run (other work on a shared machine) then falls on all of them alike,
    /// not on one.
    static func run(
        _ programs: [(specification: ProgramUnderTest.Specification, matchIDs: Bool)],
        options: BenchmarkOptions
    ) throws -> [ProgramFigures] {
        var mixes = Array(repeating: CommandMix(), count: programs.count)
        var starts = Array(repeating: 0, count: programs.count)
        var rounds = Array(repeating: [PipelinedThroughput.Result](), count: programs.count)
        for _ in 0..<options.throughputRounds {
            for (index, program) in programs.enumerated() {
                let specification = program.specification
                let commands = mixes[index].next(options.pipelinedCommands)
                starts[index] += 1
                var round = try withFreshProgram(specification, run: starts[index]) { master, process in
                    try measured(specification, process) { try PipelinedThroughput.measure(master, commands: commands) }
                }
                try ReplyCheck.verify(round.replies, against: commands, matchIDs: program.matchIDs)
                round.replies = []
                rounds[index].append(round)
            }
        }
        var figures: [ProgramFigures] = []
        for (index, program) in programs.enumerated() {
            let specification = program.specification
            let warmUp = mixes[index].next(options.warmUpRoundTrips)
            let commands = mixes[index].next(options.roundTrips)
            starts[index] += 1
            var latency = try withFreshProgram(specification, run: starts[index]) { master, process in
                try measured(specification, process) {
                    try SingleFlightLatency.measure(master, warmUp: warmUp, commands: commands)
                }
            }
            try ReplyCheck.verify(latency.replies, against: commands, matchIDs: program.matchIDs)
            latency.replies = []
            let sorted = rounds[index].sorted { $0.commandsPerSecond < $1.commandsPerSecond }
            figures.append(
                ProgramFigures(
                    name: specification.name,
                    throughput: sorted[sorted.count / 2],
                    throughputRounds: rounds[index].map(\.commandsPerSecond),
                    latency: latency
                )
            )
        }
        return figures
    }

    /// Starts the program on a new pty, waits until it answers, runs `body`, stops the program.
    static func withFreshProgram<T>(
        _ specification: ProgramUnderTest.Specification,
        run: Int,
        environment: [String: String] = [:],
        _ body: (MasterSide, ProgramUnderTest) throws -> T
    ) throws -> T {
        let wearable = try SimulatedWearable()
        let program = try ProgramUnderTest(
            specification,
            devicePath: wearable.devicePath,
            run: run,
            environment: environment
        )
        defer {
            program.stop()
            wearable.unplug()
        }
        do {
            _ = try wearable.request(probe, timeout: .seconds(60))
        } catch {
            throw TestingError(
                "\(specification.name) did not answer on \(wearable.devicePath): \(error)\n\(program.log)"
            )
        }
        guard wearable.drain(for: .milliseconds(100)).isEmpty else {
            throw TestingError("\(specification.name) answered the probe line more than once")
        }
        return try body(MasterSide(fd: wearable.fd), program)
    }

    /// Runs a measurement, adding the program's own output to any failure.
    static func measured<T>(
        _ specification: ProgramUnderTest.Specification,
        _ program: ProgramUnderTest,
        _ body: () throws -> T
    ) throws -> T {
        do {
            return try body()
        } catch {
            throw TestingError(
                "\(specification.name): \(error)\(program.isRunning ? "" : " (it exited)")\n\(program.log)"
            )
        }
    }
}
