import ArgumentParser
import ControlProtocol

/// `workoutctl devices`: every attached device and its counters, refused ones with why; `--unknown`.
///
/// The identities refused since start for not being in `devices.allowed_serials`.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Identity, node, since when, commands and errors per device; refused devices and why."
    )

    @OptionGroup var options: GlobalOptions

    @Flag(
        name: .long,
        help: "List the identities refused since start because devices.allowed_serials does not name them."
    )
    var unknown = false

    func run() {
        let list: DeviceList = options.connect().result(.devices)
        if unknown { return printUnknown(list.unknown ?? []) }
        if options.json { return list.devices.forEach(Output.json) }
        var table = TextTable(columns: [
            .init("DEVICE"), .init("NODE"), .init("STATE"), .init("SINCE"),
            .init("COMMANDS", alignment: .right), .init("ERRORS", alignment: .right),
            .init("CONNECTIONS", alignment: .right),
        ])
        for device in list.devices {
            let identity = device.name.map { "\($0) (\(device.identity))" } ?? device.identity
            table.append([
                identity, device.node, state(of: device), Output.date(device.connectedSince),
                "\(device.commands)", "\(device.errors)", "\(device.connections)",
            ])
        }
        Output.table(table)
    }

    private func state(of device: DeviceReport) -> String {
        if let refused = device.refused { return "refused: \(refused)" }
        if device.connected { return "connected" }
        return device.waitingReason.map { "waiting: \($0)" } ?? "waiting"
    }

    private func printUnknown(_ devices: [UnknownDeviceReport]) {
        if options.json { return devices.forEach(Output.json) }
        var table = TextTable(columns: [
            .init("DEVICE"), .init("LAST NODE"), .init("FIRST SEEN"), .init("LAST SEEN"),
            .init("SIGHTINGS", alignment: .right),
        ])
        for device in devices {
            table.append([
                device.identity, device.node, Output.date(device.firstSeen), Output.date(device.lastSeen),
                "\(device.sightings)",
            ])
        }
        Output.table(table)
    }
}
