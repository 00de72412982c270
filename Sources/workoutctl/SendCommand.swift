import ArgumentParser
import CommandLineOutput
import ControlProtocol

/// `workoutctl send --device ID '<json>'`: run a command line as if the device had sent it.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Run a command line on a device's session as if the device sent it, and print the reply.",
        discussion: #"Example: workoutctl send --device wearable-1 '{"command_type":"end_workout","id":7}'"#)

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The device (its identity or node); a name no device has gets its own session.")
    var device: String

    @Argument(help: "One command line, as the wearable would send it.")
    var line: String

    func run() {
        let result: SendResult = options.connect().result(.send(device: device, line: line))
        if options.json { return Output.json(result) }
        var table = TextTable(columns: [.init("DEVICE"), .init("STATUS"), .init("COMMAND"), .init("ID"), .init("REPLY")])
        table.append([
            result.device, result.reply.statusText, result.reply.commandTypeText,
            result.reply.id?.description ?? "-", result.reply.summary,
        ])
        Output.table(table)
    }
}
