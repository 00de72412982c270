import BenchmarkSupport

/// The driver's command line.
struct FleetOptions: Sendable {
    /// The hubs' `replication.postgres_url`, as an operator writes it (through the pooler).
    var hubURL = ""
    /// Where the driver itself watches the central database, `SOCKET-DIRECTORY:PORT`.
    ///
    /// The server directly, never through the pooler (as the superuser `postgres`, database `gym`).
    var watch = ""
    /// Fleet sizes to run one after another, each adding hubs to the running ones.
    var steps: [Int] = [1000]
    /// How long each step runs its load.
    var seconds = 60
    /// Mean seconds between one hub's workouts (exponential gaps).
    var workoutInterval = 180.0
    /// Seconds from a workout's start to its end.
    var workoutLength = 20.0
    /// Every this many seconds a class starts: a fraction of the hubs start a workout at the same moment.
    var burstInterval = 30.0
    var burstFraction = 0.1
    var heartbeatInterval = 30
    /// The lag every step is held to; the largest step within it is the fleet this machine holds.
    var lagLimitMilliseconds = 5000.0
    var stateDirectory = ""
    /// Hub ids are PREFIX-00001 and on, so runs into one database keep apart.
    var hubPrefix = "gym"
    /// PIDs of the server side (postmaster, pooler): their CPU, children included, is measured.
    var serverPIDs: [Int32] = []
    /// Run after the last step's load has run this many seconds: a failover under load.
    var failoverCommand = ""
    var failoverAfter = 20
    /// Where the driver watches once the failover command has run (the promoted server).
    var watchAfterFailover = ""

    static let usage = """
        usage: FleetBenchmark --hub-url URL --watch DIR:PORT --state-dir DIR [--hub-prefix P] [--steps 1000,2000] [--seconds N]
                              [--workout-interval S] [--workout-length S] [--burst-interval S] [--burst-fraction F]
                              [--heartbeat-interval S] [--lag-limit-ms MS] [--server-pids PID,PID]
                              [--failover-command CMD --failover-after S --watch-after-failover DIR:PORT]
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> FleetOptions {
        var options = FleetOptions()
        _ = try CommandLineFlags.parse(arguments) { flag, value throws(UsageError) in
            switch flag {
            case "--hub-url": options.hubURL = value
            case "--watch": options.watch = value
            case "--state-dir": options.stateDirectory = value
            case "--hub-prefix": options.hubPrefix = value
            case "--steps":
                options.steps = []
                for step in value.split(separator: ",") {
                    options.steps.append(try CommandLineFlags.positive(String(step), flag))
                }
            case "--seconds": options.seconds = try CommandLineFlags.positive(value, flag)
            case "--workout-interval": options.workoutInterval = try Self.seconds(value, flag)
            case "--workout-length": options.workoutLength = try Self.seconds(value, flag)
            case "--burst-interval": options.burstInterval = try Self.seconds(value, flag)
            case "--burst-fraction":
                guard let fraction = Double(value), (0...1).contains(fraction) else {
                    throw UsageError("\(flag) takes a fraction from 0 to 1, not \(value)")
                }
                options.burstFraction = fraction
            case "--heartbeat-interval": options.heartbeatInterval = try CommandLineFlags.positive(value, flag)
            case "--lag-limit-ms": options.lagLimitMilliseconds = try Self.seconds(value, flag)
            case "--server-pids":
                options.serverPIDs = []
                for text in value.split(separator: ",") {
                    guard let pid = Int32(text) else { throw UsageError("\(flag) takes process ids, not \(value)") }
                    options.serverPIDs.append(pid)
                }
            case "--failover-command": options.failoverCommand = value
            case "--failover-after": options.failoverAfter = try CommandLineFlags.positive(value, flag)
            case "--watch-after-failover": options.watchAfterFailover = value
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard !options.hubURL.isEmpty, !options.watch.isEmpty, !options.stateDirectory.isEmpty else {
            throw UsageError("--hub-url, --watch and --state-dir are required")
        }
        guard options.steps == options.steps.sorted() else { throw UsageError("--steps must grow") }
        guard options.failoverCommand.isEmpty || !options.watchAfterFailover.isEmpty else {
            throw UsageError("--failover-command needs --watch-after-failover")
        }
        return options
    }

    private static func seconds(_ value: String, _ flag: String) throws(UsageError) -> Double {
        guard let seconds = Double(value), seconds > 0 else {
            throw UsageError("\(flag) takes a positive number, not \(value)")
        }
        return seconds
    }
}
