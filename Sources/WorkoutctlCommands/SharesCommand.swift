import ArgumentParser
import ControlProtocol

/// `workoutctl shares`: queued and delivered shares.
struct SharesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "shares", abstract: "Queued and delivered shares.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "At most this many.")
    var limit: Int?

    func validate() throws {
        if let limit, limit <= 0 { throw ValidationError("--limit must be positive") }
    }

    func run() {
        let list: ShareList = options.connect().result(.shares(limit: limit))
        if options.json { return list.shares.forEach(Output.json) }
        Output.table(.shares(list.shares))
    }
}
