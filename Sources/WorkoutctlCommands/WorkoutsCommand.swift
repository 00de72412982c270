import ArgumentParser
import ControlProtocol

/// `workoutctl workouts`: stored workouts, newest first.
struct WorkoutsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "workouts", abstract: "Stored workouts, newest first.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Only this device (its identity or node).")
    var device: String?

    @Option(name: .long, help: "At most this many.")
    var limit: Int?

    @Flag(name: .long, help: "CSV (RFC 4180, a header row), as the page's download gives.")
    var csv = false

    func validate() throws {
        if let limit, limit <= 0 { throw ValidationError("--limit must be positive") }
    }

    func run() {
        let list: WorkoutList = options.connect().result(.workouts(device: device, limit: limit))
        if csv { return Output.text(WorkoutCSV().document(list.workouts)) }
        if options.json { return list.workouts.forEach(Output.json) }
        Output.table(.workouts(list.workouts))
    }
}
