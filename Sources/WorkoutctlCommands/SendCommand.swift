import ArgumentParser
import ControlProtocol
import Foundation

/// `workoutctl send --device ID '<json>'`: run a command line as if the device had sent it.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Run a command line on a device's session as if the device sent it, and print the reply.",
        discussion: #"""
            Example: workoutctl send --device wearable-1 '{"command_type":"end_workout","id":7}'

            Exit status: 0 the reply is ok; 1 the reply is an error (or workoutd refused the request);             2 the device is not connected (the message lists the connected ones); 69 workoutd is not running.
            """#
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "A connected device (its identity or node).")
    var device: String

    @Flag(name: .long, help: "Run on a session for --device even if no such device is connected (creates it if new).")
    var create = false

    @Argument(help: "One command line, as the wearable would send it.")
    var line: String

    func run() {
        let result: SendResult = options.connect().result(.send(device: device, line: line, create: create))
        // The reply is printed either way; the status says whether the command succeeded.
        defer { if !result.reply.isSuccess { Foundation.exit(ExitCode.failure.rawValue) } }
        if options.json { return Output.json(result) }
        var table = TextTable(columns: [
            .init("DEVICE"), .init("STATUS"), .init("COMMAND"), .init("ID"), .init("REPLY"),
        ])
        table.append([
            result.device, result.reply.statusText, result.reply.commandTypeText,
            result.reply.id?.description ?? "-", result.reply.summary,
        ])
        Output.table(table)
    }
}
