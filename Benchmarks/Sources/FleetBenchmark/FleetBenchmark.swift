// `make bench`, fleet part: many hubs replicating into one PostgreSQL through a pooler, each hub the daemon's real
// store, engine and shipper (SimulatedHub), at a gym's rates: a workout every few minutes per hub, and classes that
// start many at once.
//
// For each fleet size in --steps (hubs are added to the running ones) it warms the new hubs up (one workout each,
// seen centrally), runs the load for --seconds, waits for the stragglers, and reports the lag from a start's
// acknowledgement on its hub to its row in `workouts`, the server connections, the central rows/s and CPU, and the
// heartbeat writes. With --failover-command it runs that command (stop the primary, promote the standby) while the
// last step's load is on, then reports the time to resume and every workout lost or duplicated.
import BenchmarkSupport
import Foundation
import Logging
import Synchronization

/// What one fleet size measured.
struct StepFigures {
    var hubs = 0
    var workouts = 0
    var refused = 0
    var lagP50 = 0.0
    var lagP99 = 0.0
    var lagMax = 0.0
    var worstHubP50 = 0.0
    var worstHubP99 = 0.0
    var unseen = 0
    var serverConnections = 0
    var rowsPerSecond = 0.0
    var commitsPerSecond = 0.0
    var heartbeatsPerSecond = 0.0
    var serverCPU = 0.0
    var hubsCPU = 0.0
    var seconds = 0.0
    var failover = false
    var resumeAfterPromotion: Double?
    var outage: Double?
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("FleetBenchmark: \(text)\n".utf8))
}

@main
enum FleetBenchmark {
    static let pollInterval = Duration.milliseconds(100)
    static let drainTimeout = Duration.seconds(90)

    static func main() async {
        let options: FleetOptions
        do {
            options = try FleetOptions.parse(Array(Swift.CommandLine.arguments.dropFirst()))
        } catch {
            progress("\(error)\n\(FleetOptions.usage)")
            exit(64)
        }
        do {
            try await run(options)
        } catch {
            progress("\(error)")
            exit(1)
        }
    }

    static func run(_ options: FleetOptions) async throws {
        var logger = Logger(label: "fleet-benchmark")
        logger.logLevel = .error
        var watch = try await CentralWatch(place: options.watch)
        var hubs: [SimulatedHub] = []
        var results: [StepFigures] = []
        var exactness: (lost: Int, duplicated: Int, checked: Int) = (0, 0, 0)
        var stopped: String?

        await withTaskGroup(of: Void.self) { shippers in
            defer { shippers.cancelAll() }
            do {
                for (index, size) in options.steps.enumerated() {
                    let running = hubs.count
                    do {
                        let added = try await addHubs(upTo: size, to: &hubs, options: options, logger: logger) { hub in
                            shippers.addTask { try? await hub.shipper.run() }
                        }
                        try await warmUp(added, watch: watch)
                    } catch {
                        // A fleet this process cannot open (files, sockets) ends the climb; what ran is reported,
                        // and the hubs that never connected are left out of the count.
                        let reason = hubs.last?.shipper.status.current.lastError ?? "no error reported"
                        stopped =
                            "\(size) hubs could not run here: \(error) (a new hub's last error: \(reason); "
                            + "\(ProcessCPU.openFiles()) files open of \(ProcessCPU.openFileLimit()) allowed)"
                        progress(stopped ?? "")
                        hubs.removeSubrange(running...)
                        break
                    }
                    let failover = index == options.steps.count - 1 && !options.failoverCommand.isEmpty
                    var figures = try await measure(hubs, options: options, watch: &watch, failover: failover)
                    figures.hubs = hubs.count
                    results.append(figures)
                    progress(
                        "\(hubs.count) hubs: lag p50 \(format(figures.lagP50)) ms, p99 \(format(figures.lagP99)) ms, "
                            + "\(figures.serverConnections) server connections, \(figures.unseen) unseen"
                    )
                    if figures.unseen > 0 || figures.lagP99 > options.lagLimitMilliseconds { break }
                }
                exactness = try await checkExactlyOnce(hubs, watch: watch)
            } catch {
                progress("\(error)")
                exit(1)
            }
        }
        await watch.close()
        report(results, exactness: exactness, options: options, stopped: stopped)
    }

    /// Opens hubs until there are `size`, handing each to `start` to run its shipper.
    static func addHubs(
        upTo size: Int,
        to hubs: inout [SimulatedHub],
        options: FleetOptions,
        logger: Logger,
        start: (SimulatedHub) -> Void
    ) async throws -> [SimulatedHub] {
        var added: [SimulatedHub] = []
        progress("opening \(size - hubs.count) hubs")
        for number in hubs.count..<size {
            let hubID = options.hubPrefix + String(format: "-%05d", number + 1)
            let hub = try await SimulatedHub(
                hubID: hubID,
                directory: "\(options.stateDirectory)/\(hubID)",
                url: options.hubURL,
                heartbeatInterval: options.heartbeatInterval,
                logger: logger
            )
            start(hub)
            hubs.append(hub)
            added.append(hub)
        }
        return added
    }

    /// One workout on each new hub, waited for centrally.
    ///
    /// Afterwards every new hub has connected, migrated and shipped.
    static func warmUp(_ hubs: [SimulatedHub], watch: CentralWatch) async throws {
        let book = LagBook()
        await withTaskGroup(of: Void.self) { group in
            for hub in hubs {
                group.addTask { await workout(on: hub, device: 0, length: .zero, book: book) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while !book.unseen.isEmpty {
            guard ContinuousClock.now < deadline else {
                throw FleetError("\(book.unseen.count) of \(hubs.count) new hubs never shipped their first workout")
            }
            book.seen(try await watch.arrived(book.unseen), at: .now)
            try await Task.sleep(for: .milliseconds(200))
        }
        progress("\(hubs.count) hubs connected and shipping")
    }

    /// A workout on `hub`: started, ended `length` later; its start's acknowledgement goes to `book`.
    static func workout(on hub: SimulatedHub, device: Int, length: Duration, book: LagBook) async {
        guard let started = await hub.startWorkout(device: device) else {
            book.refused()
            return
        }
        book.acknowledged(WorkoutKey(hubID: hub.hubID, workoutID: started.workoutID), at: started.acknowledged)
        if length > .zero { try? await Task.sleep(for: length) }
        _ = await hub.endWorkout(device: device)
    }

    /// The load on every hub for `options.seconds`, then the stragglers.
    ///
    /// With `failover`, the failover command runs `options.failoverAfter` seconds in.
    static func measure(
        _ hubs: [SimulatedHub],
        options: FleetOptions,
        watch: inout CentralWatch,
        failover: Bool
    ) async throws -> StepFigures {
        let book = LagBook()
        let devices = WearableNumbers()
        let length = Duration.milliseconds(Int(options.workoutLength * 1000))
        let rowsBefore = try await watch.rowsWritten(to: "workouts") + watch.rowsWritten(to: "shares")
        let heartbeatsBefore = try await watch.rowsWritten(to: "hubs")
        let commitsBefore = try await watch.commits()
        let serverBefore = ProcessCPU.seconds(ofTreesRootedAt: options.serverPIDs)
        let hubsBefore = ProcessCPU.ownSeconds()
        let start = ContinuousClock.now
        let end = start + .seconds(options.seconds)
        var figures = StepFigures()
        figures.failover = failover

        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                // Each hub: workouts at exponential gaps, on a wearable of its own each.
                for hub in hubs {
                    group.addTask {
                        var generator = SystemRandomNumberGenerator()
                        await withTaskGroup(of: Void.self) { workouts in
                            while true {
                                let gap =
                                    -log(Double.random(in: Double.ulpOfOne..<1, using: &generator))
                                    * options.workoutInterval
                                let next = ContinuousClock.now + .milliseconds(Int(gap * 1000))
                                guard next < end else { break }
                                try? await Task.sleep(until: next)
                                let device = devices.next()
                                workouts.addTask { await workout(on: hub, device: device, length: length, book: book) }
                            }
                        }
                    }
                }
                // Classes: a share of the hubs start at the same moment.
                group.addTask {
                    var next = start + .milliseconds(Int(options.burstInterval * 1000))
                    await withTaskGroup(of: Void.self) { bursts in
                        while next < end {
                            try? await Task.sleep(until: next)
                            next += .milliseconds(Int(options.burstInterval * 1000))
                            for hub in hubs.shuffled().prefix(Int(Double(hubs.count) * options.burstFraction)) {
                                let device = devices.next()
                                bursts.addTask { await workout(on: hub, device: device, length: length, book: book) }
                            }
                        }
                    }
                }
            }
        }

        var failoverStarted: ContinuousClock.Instant?
        var promoted: ContinuousClock.Instant?
        var loadEnded: ContinuousClock.Instant?
        var lastConnectionSample = ContinuousClock.now - .seconds(1)
        while true {
            if failover, failoverStarted == nil, start.duration(to: .now) >= .seconds(options.failoverAfter) {
                failoverStarted = .now
                progress("failover: \(options.failoverCommand)")
                try runFailover(options.failoverCommand)
                promoted = .now
                await watch.close()
                watch = try await CentralWatch(place: options.watchAfterFailover)
            }
            book.seen(try await watch.arrived(book.unseen), at: .now)
            if lastConnectionSample.duration(to: .now) >= .seconds(1) {
                lastConnectionSample = .now
                figures.serverConnections = max(figures.serverConnections, try await watch.serverConnections())
            }
            if loadEnded == nil, ContinuousClock.now >= end {
                await load.value
                loadEnded = .now
            }
            if let loadEnded, book.unseen.isEmpty || loadEnded.duration(to: .now) > drainTimeout { break }
            try await Task.sleep(for: pollInterval)
        }
        let elapsed = start.duration(to: loadEnded ?? .now).milliseconds / 1000

        let lags = book.lagsInMilliseconds
        let worst = book.worstLagPerHubInMilliseconds
        figures.workouts = book.acknowledgedCount
        figures.refused = book.refusedCount
        figures.unseen = book.unseen.count
        figures.lagP50 = percentile(lags, 0.5)
        figures.lagP99 = percentile(lags, 0.99)
        figures.lagMax = lags.last ?? 0
        figures.worstHubP50 = percentile(worst, 0.5)
        figures.worstHubP99 = percentile(worst, 0.99)
        figures.seconds = elapsed
        if failover {
            // After a failover the counters are the promoted server's, which began as a copy: only the rates of a
            // step without one are reported.
            if let promoted, let stopped = failoverStarted,
                let resumed = book.firstSighting(ofAcknowledgedAfter: stopped)
            {
                figures.resumeAfterPromotion = promoted.duration(to: resumed).milliseconds / 1000
                figures.outage = stopped.duration(to: resumed).milliseconds / 1000
            }
        } else {
            let rows = try await watch.rowsWritten(to: "workouts") + watch.rowsWritten(to: "shares") - rowsBefore
            figures.rowsPerSecond = Double(rows) / elapsed
            figures.heartbeatsPerSecond = Double(try await watch.rowsWritten(to: "hubs") - heartbeatsBefore) / elapsed
            figures.commitsPerSecond = Double(try await watch.commits() - commitsBefore) / elapsed
        }
        figures.serverCPU = (ProcessCPU.seconds(ofTreesRootedAt: options.serverPIDs) - serverBefore) / elapsed
        figures.hubsCPU = (ProcessCPU.ownSeconds() - hubsBefore) / elapsed
        return figures
    }

    static func runFailover(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FleetError("the failover command exited \(process.terminationStatus)")
        }
    }

    /// Every workout each hub stored, against the central `workouts`.
    ///
    /// Lost: stored, not central. Duplicated: central under a key no hub stored, or twice under one key.
    static func checkExactlyOnce(
        _ hubs: [SimulatedHub],
        watch: CentralWatch
    ) async throws -> (lost: Int, duplicated: Int, checked: Int) {
        // The shippers finish what the last workouts' ends changed before the count.
        let deadline = ContinuousClock.now + drainTimeout
        for hub in hubs {
            while try await hub.shipper.pendingCount() > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let central = try await watch.allWorkouts()
        let centralSet = Set(central)
        var stored = Set<WorkoutKey>()
        for hub in hubs {
            for id in try await hub.storedWorkoutIDs() { stored.insert(WorkoutKey(hubID: hub.hubID, workoutID: id)) }
        }
        let ours = Set(hubs.map(\.hubID))
        let lost = stored.subtracting(centralSet).count
        let extra = centralSet.filter { ours.contains($0.hubID) }.subtracting(stored).count
        return (lost, extra + (central.count - centralSet.count), stored.count)
    }

    static func report(
        _ results: [StepFigures],
        exactness: (lost: Int, duplicated: Int, checked: Int),
        options: FleetOptions,
        stopped: String?
    ) {
        let within = results.filter { $0.unseen == 0 && $0.lagP99 <= options.lagLimitMilliseconds && !$0.failover }
        let largest = within.map(\.hubs).max() ?? 0
        var metrics: [String: Double] = [
            "largest_fleet_within_lag_limit": Double(largest),
            "workouts_lost": Double(exactness.lost),
            "workouts_duplicated": Double(exactness.duplicated),
        ]
        if let first = results.first, !first.failover {
            metrics["lag_p99_ms"] = first.lagP99
            metrics["server_connections"] = Double(first.serverConnections)
            metrics["hubs"] = Double(first.hubs)
        }
        if let failover = results.last, failover.failover {
            metrics["failover_resume_seconds"] = failover.resumeAfterPromotion ?? -1
        }
        try? Thresholds.writeMetrics(metrics)

        print(
            "| hubs | workouts | lag p50 / p99 / max | worst hub's lag, p50 / p99 of hubs | server connections |"
                + " central rows/s | commits/s | hubs-row writes/s (heartbeats, last_seen) | server CPU | hubs' CPU |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for step in results {
            let rates =
                !step.failover
                ? "\(format(step.rowsPerSecond)) | \(format(step.commitsPerSecond)) | \(format(step.heartbeatsPerSecond))"
                : "(failover) | | "
            print(
                "| \(step.hubs)\(step.failover ? ", failover" : "") | \(step.workouts) | "
                    + "\(format(step.lagP50)) / \(format(step.lagP99)) / \(format(step.lagMax)) ms | "
                    + "\(format(step.worstHubP50)) / \(format(step.worstHubP99)) ms | \(step.serverConnections) | "
                    + "\(rates) | \(format(step.serverCPU * 100))% | \(format(step.hubsCPU * 100))% |"
            )
        }
        print("")
        if results.contains(where: { !$0.failover }) {
            print("Largest fleet with lag p99 ≤ \(format(options.lagLimitMilliseconds / 1000)) s: \(largest) hubs.")
        }
        print(
            "Every workout the hubs stored (\(exactness.checked)) checked against the central table: "
                + "\(exactness.lost) lost, \(exactness.duplicated) duplicated."
        )
        if let stopped { print("The climb stopped: \(stopped).") }
        if let failover = results.last, failover.failover {
            let resume = failover.resumeAfterPromotion.map { "\(format($0)) s" } ?? "never"
            let outage = failover.outage.map { "\(format($0)) s" } ?? "never"
            print(
                "Failover under the load of \(failover.hubs) hubs: the first workout acknowledged after the primary's "
                    + "stop reached the promoted server \(outage) after the stop, \(resume) after the promotion returned."
            )
        }
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: "%.1f", value)
    }
}

/// Numbers for new wearables: each workout of the load starts on a wearable of its own.
final class WearableNumbers: Sendable {
    private let last = Atomic<Int>(0)

    func next() -> Int { last.add(1, ordering: .relaxed).newValue }
}
