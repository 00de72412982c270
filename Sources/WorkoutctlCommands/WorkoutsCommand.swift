import ArgumentParser
import ControlProtocol
import Foundation

/// `workoutctl workouts`: stored workouts, newest first.
struct WorkoutsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "workouts", abstract: "Stored workouts, newest first.")

    @OptionGroup var options: GlobalOptions

    @Option(
        name: .long,
        help: "Only devices whose serial, node or name contains this, letters in any case (as /api/workouts)."
    )
    var device: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only workouts started at or after this time (ISO 8601, e.g. 2026-11-28T07:50:15Z or 2026-11-28 07:50:15Z).",
            valueName: "time"
        )
    )
    var since: String?

    @Option(name: .long, help: ArgumentHelp("Only workouts started before this time (as --since).", valueName: "time"))
    var until: String?

    @Option(name: .long, help: "At most this many.")
    var limit: Int?

    @Flag(name: .long, help: "CSV (RFC 4180, a header row), as the page's download gives.")
    var csv = false

    func validate() throws {
        if let limit, limit <= 0 { throw ValidationError("--limit must be positive") }
        _ = try Self.time(since, option: "--since")
        _ = try Self.time(until, option: "--until")
    }

    func run() throws {
        let call = ControlCall.workouts(
            device: device,
            limit: limit,
            since: try Self.time(since, option: "--since"),
            until: try Self.time(until, option: "--until")
        )
        let list: WorkoutList = options.connect().result(call)
        if csv { return Output.text(WorkoutCSV().document(list.workouts)) }
        if options.json { return list.workouts.forEach(Output.json) }
        Output.table(.workouts(list.workouts))
    }

    /// `text` as a time, or a usage error naming `option` and the forms it takes.
    static func time(_ text: String?, option: String) throws -> Date? {
        guard let text else { return nil }
        guard let date = QueryTime.parse(text) else {
            throw ValidationError(
                "\(option) must be an ISO 8601 time with a zone, e.g. 2026-11-28T07:50:15Z or 2026-11-28 07:50:15Z; got '\(text)'"
            )
        }
        return date
    }
}
