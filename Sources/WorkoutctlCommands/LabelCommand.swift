import ArgumentParser
import ControlProtocol

/// `workoutctl label <serial> <name>`.
///
/// The name a wearable is shown by, beside its serial, on the page, in the API, in workoutctl's tables and in CSV.
struct LabelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "label",
        abstract: "Name a wearable (by its serial or node); --remove forgets its name.",
        discussion: """
            Example: workoutctl label 0483_5740_WB-0042 "Treadmill 3"

            A name has at most \(DeviceName.maximumLength) characters, without control or bidirectional \
            formatting characters. A wearable can be named before it is plugged in. Needs root or the daemon's user.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The wearable's serial (its identity, as workoutctl devices shows it) or its node.")
    var device: String

    @Argument(help: "Its name; leave it out with --remove.")
    var name: String?

    @Flag(name: .long, help: "Forget the wearable's name.")
    var remove = false

    func validate() throws {
        if remove, name != nil { throw ValidationError("give a name or --remove, not both") }
        guard !remove else { return }
        guard let name else { throw ValidationError("missing the name (or --remove to forget it)") }
        if case .failure(let error) = DeviceName.validated(name) { throw ValidationError(error.message) }
    }

    func run() {
        let result: LabelResult = options.connect().result(.label(device: device, name: remove ? nil : name))
        if options.json { return Output.json(result) }
        let note = result.attached ? "" : " (not attached now)"
        if let name = result.name {
            Output.text("\(result.device) is named \(name)\(note)\n")
        } else {
            Output.text("\(result.device) has no name now\(note)\n")
        }
    }
}
