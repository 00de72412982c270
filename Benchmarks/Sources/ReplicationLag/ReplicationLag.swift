// `make bench`, replication part: how long a workout takes from its start_workout reply on the tty to its row in
// the central PostgreSQL, with the hub under a paced load (by default 4 devices × 250 commands/s = 1,000/s).
//
//   ReplicationLag --socket-dir DIR --hub-id ID [--user U] [--database D] [--port P]
//                  [--devices N] [--rate N] [--seconds N] -- WORKOUTD-COMMAND...
//
// It opens N ptys, starts WORKOUTD-COMMAND with `--device PATH` for each, and on every device alternates
// start_workout and end_workout at the given rate per device (each command sent at its slot, never in a burst).
// A start's reply time is stamped when the reply is read; a poller queries `workouts` for the hub every few
// milliseconds and stamps each row when it first sees it. Prints the markdown of the distribution.
import BenchmarkSupport
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Synchronization
import WorkoutProtocol
import WorkoutdTesting

struct LagOptions {
    var socketDirectory = ""
    var hubID = ""
    var user = "workoutd"
    var database = "gym"
    var port = 5432
    var devices = 4
    var rate = 250
    var seconds = 10
    var daemon: [String] = []

    static let usage = """
        usage: ReplicationLag --socket-dir DIR --hub-id ID [--user U] [--database D] [--port P]
                              [--devices N] [--rate N] [--seconds N] -- WORKOUTD-COMMAND...
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> LagOptions {
        var options = LagOptions()
        options.daemon = try CommandLineFlags.parse(arguments) { flag, value throws(UsageError) in
            switch flag {
            case "--socket-dir": options.socketDirectory = value
            case "--hub-id": options.hubID = value
            case "--user": options.user = value
            case "--database": options.database = value
            case "--port": options.port = try CommandLineFlags.positive(value, flag)
            case "--devices": options.devices = try CommandLineFlags.positive(value, flag)
            case "--rate": options.rate = try CommandLineFlags.positive(value, flag)
            case "--seconds": options.seconds = try CommandLineFlags.positive(value, flag)
            default: throw UsageError("unknown option \(flag)")
            }
        }
        guard !options.socketDirectory.isEmpty, !options.hubID.isEmpty, !options.daemon.isEmpty else {
            throw UsageError("--socket-dir, --hub-id and the workoutd command are required")
        }
        return options
    }
}

/// When each workout's start was acknowledged on its tty, and when its row was first seen centrally.
final class Sightings: Sendable {
    private struct State {
        var replied: [Int64: ContinuousClock.Instant] = [:]
        var seen: [Int64: ContinuousClock.Instant] = [:]
        var highestSeen: Int64 = 0
    }
    private let state = Mutex(State())

    func replied(_ workoutID: Int64, at instant: ContinuousClock.Instant) {
        state.withLock { $0.replied[workoutID] = instant }
    }

    /// Only the first sighting counts.
    func seen(_ workoutIDs: [Int64], at instant: ContinuousClock.Instant) {
        state.withLock { state in
            for id in workoutIDs where state.seen[id] == nil {
                state.seen[id] = instant
                state.highestSeen = max(state.highestSeen, id)
            }
        }
    }

    /// The poller asks for rows above this.
    ///
    /// Below the lowest acknowledged start not yet seen, so a row that arrives out of id order is still found;
    /// everything at or below it has been seen already.
    var pollFloor: Int64 {
        state.withLock { state in
            let unseen = state.replied.keys.filter { state.seen[$0] == nil }
            return (unseen.min() ?? state.highestSeen + 1) - 1
        }
    }

    var unseenCount: Int {
        state.withLock { state in state.replied.keys.count { state.seen[$0] == nil } }
    }

    /// Seen minus replied, in milliseconds, for every acknowledged start.
    ///
    /// A row seen before its reply was read counts 0.
    var lagsInMilliseconds: [Double] {
        state.withLock { state in
            state.replied.compactMap { id, replied in
                state.seen[id].map { max(0, milliseconds(replied.duration(to: $0))) }
            }
        }
    }
}

func milliseconds(_ duration: Duration) -> Double {
    duration.inSeconds * 1000
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("ReplicationLag: \(text)\n".utf8))
}

/// One wearable's paced load.
///
/// Start, end, start, end…, each command sent at its own slot, whether or not the replies before it are in (a hub under
/// load answers later, it does not make its wearables slow down).
func drive(
    _ wearable: SimulatedWearable,
    device: Int,
    options: LagOptions,
    start: ContinuousClock.Instant
) throws(TestingError) -> Int {
    let interval = Duration.seconds(1) / options.rate
    let commands = options.rate * options.seconds
    // Devices are offset within the interval, so the hub sees an even stream rather than N commands at once.
    var slot = start + interval / options.devices * device
    for index in 0..<commands {
        let wait = ContinuousClock.now.duration(to: slot)
        if wait > .zero { Thread.sleep(forTimeInterval: milliseconds(wait) / 1000) }
        slot += interval
        let command: Command =
            index.isMultiple(of: 2)
            ? .startWorkout(Workout(location: "Rack \(device)", date: Date(), intensityLevel: index % 10 + 1))
            : .endWorkout
        try wearable.send(SimulatedWearable.line(for: command, id: .integer(Int64(index))))
    }
    return commands
}

/// Reads one wearable's replies as they come, stamping each workout start.
func collect(_ wearable: SimulatedWearable, device: Int, commands: Int, sightings: Sightings) throws(TestingError) {
    for _ in 0..<commands {
        let reply = try wearable.readLine()
        let repliedAt = ContinuousClock.now
        guard let decoded = try? JSONDecoder().decode(Reply.self, from: Data(reply.utf8)), decoded.isSuccess else {
            throw TestingError("device \(device): unexpected reply \(reply)")
        }
        if case .ok(.workoutStarted(let workoutID)) = decoded.outcome {
            sightings.replied(workoutID, at: repliedAt)
        }
    }
}

@main
enum ReplicationLag {
    static let pollInterval = Duration.milliseconds(5)
    /// After the load, how long the poller waits for rows still missing before calling them lost.
    static let drainTimeout = Duration.seconds(60)

    static func main() async {
        let options: LagOptions
        do {
            options = try LagOptions.parse(Array(Swift.CommandLine.arguments.dropFirst()))
        } catch {
            progress("\(error)\n\(LagOptions.usage)")
            exit(64)
        }
        do {
            try await run(options)
        } catch {
            progress("\(error)")
            exit(1)
        }
    }

    static func run(_ options: LagOptions) async throws {
        let wearables = try (0..<options.devices).map { _ in try SimulatedWearable() }
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("replication-lag-\(getpid()).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: logURL) }
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: options.daemon[0])
        daemon.arguments = Array(options.daemon.dropFirst()) + wearables.flatMap { ["--device", $0.devicePath] }
        daemon.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("WORKOUTD_") }
        daemon.standardInput = FileHandle.nullDevice
        let log = try FileHandle(forWritingTo: logURL)
        daemon.standardOutput = log
        daemon.standardError = log
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
            for wearable in wearables { wearable.unplug() }
        }
        func daemonLog() -> String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

        // A line every session answers without changing state.
        for wearable in wearables {
            do {
                _ = try wearable.request(
                    #"{"command_type":"share_workout","service":"twitter","id":"probe"}"#,
                    timeout: .seconds(60)
                )
            } catch {
                throw TestingError("workoutd did not answer on \(wearable.devicePath): \(error)\n\(daemonLog())")
            }
        }

        var configuration = PostgresConnection.Configuration(
            unixSocketPath: "\(options.socketDirectory)/.s.PGSQL.\(options.port)",
            username: options.user,
            password: nil,
            database: options.database
        )
        configuration.options.connectTimeout = .seconds(10)
        let logger = Logger(label: "replication-lag")
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: configuration,
            id: 1,
            logger: logger
        )

        let sightings = Sightings()
        let failures = Mutex<[String]>([])
        let finished = Atomic<Int>(0)
        let commandsSent = Atomic<Int>(0)
        progress("\(options.devices) devices × \(options.rate) commands/s for \(options.seconds) s")
        let start = ContinuousClock.now + .milliseconds(100)
        for (device, wearable) in wearables.enumerated() {
            let sender = Thread {
                do {
                    let sent = try drive(wearable, device: device, options: options, start: start)
                    commandsSent.add(sent, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            let receiver = Thread {
                do {
                    try collect(
                        wearable,
                        device: device,
                        commands: options.rate * options.seconds,
                        sightings: sightings
                    )
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                finished.add(1, ordering: .releasing)
            }
            receiver.start()
            sender.start()
        }

        var loadEnded: ContinuousClock.Instant?
        while true {
            let floor = sightings.pollFloor
            let rows = try await connection.query(
                "SELECT workout_id FROM workouts WHERE hub_id = \(options.hubID) AND workout_id > \(floor)",
                logger: logger
            )
            var ids: [Int64] = []
            for try await id in rows.decode(Int64.self) { ids.append(id) }
            sightings.seen(ids, at: .now)
            if loadEnded == nil, finished.load(ordering: .acquiring) == options.devices { loadEnded = .now }
            if let loadEnded {
                if sightings.unseenCount == 0 { break }
                if loadEnded.duration(to: .now) > drainTimeout { break }
            }
            try await Task.sleep(for: pollInterval)
        }
        let elapsed = start.duration(to: loadEnded ?? .now)
        try await connection.close()

        if let failure = failures.withLock({ $0.first }) {
            throw TestingError("the load failed: \(failure)\n\(daemonLog())")
        }
        let lost = sightings.unseenCount
        let lags = sightings.lagsInMilliseconds.sorted()
        guard !lags.isEmpty else { throw TestingError("no workout reached PostgreSQL\n\(daemonLog())") }
        func percentile(_ fraction: Double) -> Double {
            lags[min(lags.count - 1, Int((Double(lags.count) * fraction).rounded(.up)) - 1)]
        }
        let p99 = percentile(0.99)
        let rate = Double(commandsSent.load(ordering: .relaxed)) / (milliseconds(elapsed) / 1000)
        // The floors: Benchmarks/Thresholds/replication.json.
        let thresholds = try Thresholds.load(part: "replication")
        let p99Floors = thresholds.floors(on: "lag_p99_ms")
        let lostFloors = thresholds.floors(on: "workouts_lost")
        let lostMet = lostFloors.allSatisfy { $0.isMet(by: Double(lost)) }
        let passed = p99Floors.allSatisfy { $0.isMet(by: p99) } && lostMet
        let p99Requirement = p99Floors.map { "\($0.requirement) ms" }.joined(separator: ", ")
        let lostRequirement = lostFloors.map(\.requirement).joined(separator: ", ")
        try Thresholds.writeMetrics(["lag_p99_ms": p99, "workouts_lost": Double(lost)])
        print(
            """
            | replication lag (\(options.devices) devices, \(lags.count + lost) workouts) | value | floor | result |
            |---|---:|---:|---|
            | commands/s achieved (target \(options.devices * options.rate)) | \(Int(rate.rounded())) | | |
            | start reply → row in PostgreSQL, p50 | \(format(percentile(0.5))) ms | | |
            | start reply → row in PostgreSQL, p99 | \(format(p99)) ms | \(p99Requirement) | \(passed ? "PASS" : "MISS") |
            | start reply → row in PostgreSQL, max | \(format(lags[lags.count - 1])) ms | | |
            | workouts not in PostgreSQL \(Int(milliseconds(drainTimeout) / 1000)) s after the load | \(lost) | \(lostRequirement) | \(lostMet ? "PASS" : "MISS") |
            """
        )
        progress(
            "\(passed ? "PASS" : "MISS") replication lag p99 = \(format(p99)) ms (\(p99Requirement)), \(lost) lost"
        )
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
