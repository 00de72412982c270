import BenchmarkSupport

/// What `WorkoutdBenchmarks` measures, from its command line.
///
/// Each program is `NAME=COMMAND`, where COMMAND is run by `/bin/sh -c` with `{device}` replaced by the
/// pty's device path and `{run}` by the number of the program's start (each measurement starts it
/// afresh). The baseline is the yardstick; the first subject is held to the transport floors against it; a
/// durable subject is held to the durable floor against the first subject; a replicated subject (the same store
/// with replication to PostgreSQL on) to the replication floor against the last durable subject. A reference is
/// measured like the baseline (its replies are not workoutd's) and shown beside it, held to nothing
/// (``BenchmarkTable``; docs/decisions/0011-benchmark-floors.md).
struct BenchmarkOptions {
    var baseline: ProgramUnderTest.Specification?
    var references: [ProgramUnderTest.Specification] = []
    var subjects: [ProgramUnderTest.Specification] = []
    var durableSubjects: [ProgramUnderTest.Specification] = []
    var replicatedSubjects: [ProgramUnderTest.Specification] = []
    /// The anchors for the first durable subject: the C durable echo and the Python durable peer.
    ///
    /// The C durable echo makes a write and an fdatasync per read; the Python durable peer uses sqlite3 with
    /// synchronous=FULL. Both are measured like the baseline and shown beside it.
    var durableEcho: ProgramUnderTest.Specification?
    var durablePeer: ProgramUnderTest.Specification?
    /// With `--count`: the C echo behind epoll, waiting for the device as an event loop does.
    ///
    /// Between the C echo and the echo over NIO, it tells the readiness model's cost from the event loop's.
    var epollEcho: ProgramUnderTest.Specification?
    /// With `--count`: workoutd's session over the in-memory store, without NIO.
    ///
    /// It runs behind an epoll loop of its own. Between the C echo behind epoll and the daemon, it tells the protocol's
    /// cost from NIO's and the daemon's.
    var sessionBehindEpoll: ProgramUnderTest.Specification?
    /// With `--count`: the same over workoutd's SQLite store, committing in place.
    ///
    /// Beside the C durable echo, it tells the protocol's and the store's share of a durable command apart from NIO's
    /// loop and the daemon's own.
    var durableSessionBehindEpoll: ProgramUnderTest.Specification?
    var pipelinedCommands = 100_000
    var throughputRounds = 3
    var roundTrips = 20_000
    var warmUpRoundTrips = 2_000
    /// The part whose thresholds file holds the floors (`Benchmarks/Thresholds/PART.json`).
    var thresholdsPart = "pty"
    /// Instead of throughput and latency: the cost of a command.
    ///
    /// What each single-flight command costs each program (``CommandCost``).
    var countCost = false
    /// The malloc-count shim (Benchmarks/peers/malloc-count.c), loaded into each program with `--count`.
    var mallocShim: String?
    /// With `--count`: instructions from `perf stat`.
    var perfStat = false
    /// With `--count`: a `perf record -g` profile of each subject and durable subject into this directory.
    var profileDirectory: String?

    static let usage = """
        usage: WorkoutdBenchmarks --baseline NAME=COMMAND [--reference NAME=COMMAND]... --subject NAME=COMMAND
                                  [--durable NAME=COMMAND]... [--replicated NAME=COMMAND]... [--durable-echo NAME=COMMAND]
                                  [--durable-peer NAME=COMMAND] [--commands N] [--rounds N] [--round-trips N] [--warm-up N]
                                  [--thresholds PART]
          COMMAND runs under /bin/sh -c; {device} is replaced by the pty's device path, {run} by the
          number of the start (every round and the latency run start the program afresh).
          --replicated   a durable subject with replication on, held to issue 18's floor against the last --durable
          --durable-echo the C durable echo: the first --durable is held to issue 31's floors against it
          --durable-peer the Python durable peer: the first --durable's single-flight p50 must be below its
          --commands     commands per pipelined round (default 100000, rounded up to whole start/end/share cycles)
          --rounds       pipelined rounds per program; the median is reported (default 3)
          --round-trips  single-flight round trips measured after warm-up (default 20000)
          --warm-up      single-flight round trips before measuring (default 2000)
          --thresholds   the part whose floors apply: Benchmarks/Thresholds/PART.json (default pty)
          --count on     instead: CPU, mallocs and instructions per single-flight command, --rounds starts each
          --malloc-shim  with --count: the malloc-count shim (LD_PRELOAD) for the mallocs
          --perf-stat on with --count: instructions from perf stat
          --profile DIR  with --count: perf record -g of the first --subject and --durable, to DIR/in-memory.data
                         and DIR/durable.data
          --epoll-echo NAME=COMMAND
                         with --count: the C echo behind epoll, counted beside the C echo and the first --reference
          --session-epoll NAME=COMMAND
                         with --count: workoutd's session behind an epoll loop without NIO (SessionBehindEpoll)
          --session-epoll-durable NAME=COMMAND
                         with --count: the same over workoutd's durable store (SessionBehindEpoll DEVICE STATE_DIR)
        """

    static func parse(_ arguments: some Sequence<String>) throws(UsageError) -> BenchmarkOptions {
        var options = BenchmarkOptions()
        let rest = try CommandLineFlags.parse(arguments) { flag, value throws(UsageError) in
            switch flag {
            case "--baseline": options.baseline = try .init(parsing: value)
            case "--reference": options.references.append(try .init(parsing: value))
            case "--subject": options.subjects.append(try .init(parsing: value))
            case "--durable": options.durableSubjects.append(try .init(parsing: value))
            case "--replicated": options.replicatedSubjects.append(try .init(parsing: value))
            case "--durable-echo": options.durableEcho = try .init(parsing: value)
            case "--durable-peer": options.durablePeer = try .init(parsing: value)
            case "--epoll-echo": options.epollEcho = try .init(parsing: value)
            case "--session-epoll": options.sessionBehindEpoll = try .init(parsing: value)
            case "--session-epoll-durable": options.durableSessionBehindEpoll = try .init(parsing: value)
            case "--commands": options.pipelinedCommands = try CommandLineFlags.positive(value, flag)
            case "--rounds": options.throughputRounds = try CommandLineFlags.positive(value, flag)
            case "--round-trips": options.roundTrips = try CommandLineFlags.positive(value, flag)
            case "--warm-up": options.warmUpRoundTrips = try CommandLineFlags.positive(value, flag)
            case "--thresholds": options.thresholdsPart = value
            case "--count": options.countCost = value == "on"
            case "--malloc-shim": options.mallocShim = value
            case "--perf-stat": options.perfStat = value == "on"
            case "--profile": options.profileDirectory = value
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard rest.isEmpty else { throw UsageError("unexpected arguments after --: \(rest.joined(separator: " "))") }
        guard options.baseline != nil else { throw UsageError("--baseline is required") }
        guard !options.subjects.isEmpty else { throw UsageError("at least one --subject is required") }
        return options
    }
}
