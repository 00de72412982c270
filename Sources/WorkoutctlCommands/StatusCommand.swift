import ArgumentParser
import ControlProtocol

/// `workoutctl status`: is the daemon up, and what has it been doing.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Uptime, version, devices, active workouts, queued shares and counters."
    )

    @OptionGroup var options: GlobalOptions

    func run() {
        let status: StatusReport = options.connect().result(.status)
        if options.json { return Output.json(status) }
        var table = TextTable(columns: [.init("FIELD"), .init("VALUE")])
        let counters = status.counters
        let rows: [(String, String)] = [
            ("version", status.version),
            ("pid", "\(status.pid)"),
            ("started", Output.date(status.startedAt)),
            ("uptime", Output.duration(status.uptimeSeconds)),
            ("devices", status.devicesSummary),
            ("active workouts", "\(status.activeWorkouts)"),
            ("queued shares", "\(status.queuedShares)"),
            ("control clients", "\(status.controlClients), \(status.eventSubscribers) following events"),
            ("commands", "\(counters.commands)"),
            ("errors", "\(counters.errors)"),
            ("invalid lines", "\(counters.invalidLines)"),
            ("replays", "\(counters.replays)"),
            ("workouts started", "\(counters.workoutsStarted)"),
            ("workouts ended", "\(counters.workoutsEnded)"),
            ("shares queued", "\(counters.sharesQueued)"),
            ("shares delivered", "\(counters.sharesDelivered)"),
            ("share failures", "\(counters.shareFailures)"),
            ("reloads", "\(counters.reloads) applied, \(counters.rejectedReloads) rejected"),
        ]
        for (field, value) in rows { table.append([field, value]) }
        if !status.pendingRestart.isEmpty {
            table.append([
                "pending restart", status.pendingRestart.joined(separator: ", ") + " (takes effect after restart)",
            ])
        }
        if let replication = status.replication { table.append(["replication", Self.describe(replication)]) }
        if let problem = status.storageProblem {
            table.append([
                "storage",
                "unavailable since \(Output.date(problem.since)): \(problem.reason) (storing commands get storage_unavailable)",
            ])
        }
        Output.table(table)
    }

    /// The replication line of `workoutctl status`.
    ///
    /// For example `connected since …, 0 pending, last shipped …, 1 of 2 connections open to db1:5432` or
    /// `disconnected since …, 1234 pending, last error …, 0 of 2 connections open`.
    static func describe(_ replication: ReplicationReport) -> String {
        var parts = ["\(replication.state) since \(Output.date(replication.since))", "\(replication.pending) pending"]
        if let shipped = replication.lastShippedAt { parts.append("last shipped \(Output.date(shipped))") }
        if let error = replication.lastError { parts.append("last error \(error)") }
        parts.append(
            "\(replication.connections) of \(replication.maxConnections) connections open"
                + (replication.centralHost.map { " to \($0)" } ?? "")
        )
        if replication.serverIdentity == "unverified" {
            // Said on every status: the link is open to whoever sits on the path (sslmode require or disable).
            parts.append("server identity unverified")
        }
        return parts.joined(separator: ", ")
    }
}
