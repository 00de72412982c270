import ArgumentParser
import ControlProtocol

/// `workoutctl devices`: every attached device and its counters.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Identity, node, since when, commands and errors per device.")

    @OptionGroup var options: GlobalOptions

    func run() {
        let list: DeviceList = options.connect().result(.devices)
        if options.json { return list.devices.forEach(Output.json) }
        var table = TextTable(columns: [
            .init("DEVICE"), .init("NODE"), .init("STATE"), .init("SINCE"),
            .init("COMMANDS", alignment: .right), .init("ERRORS", alignment: .right), .init("CONNECTIONS", alignment: .right),
        ])
        for device in list.devices {
            table.append([
                device.identity, device.node, device.connected ? "connected" : device.waitingReason.map { "waiting: \($0)" } ?? "waiting", Output.date(device.connectedSince),
                "\(device.commands)", "\(device.errors)", "\(device.connections)",
            ])
        }
        Output.table(table)
    }
}
