import ControlProtocol
import Foundation
import Testing
import WorkoutdTesting

/// What `status` counts and what the log announces.
///
/// With a wearable, a silent tty, a typo and an unplugged path configured.
@Suite struct DeviceCountsTests {
    @Test func eachCountMeansOneThingAndOnlyAWearableIsAnnounced() throws {
        let wearable = try SimulatedWearable()
        // A tty that opens but never speaks the protocol (a modem, a console).
        let silent = try SimulatedWearable()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "counts-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // A regular file, as `/etc/hostname` given by mistake, and a path with nothing on it.
        let notATTY = scratch.appendingPathComponent("hostname").path
        try "hub\n".write(toFile: notATTY, atomically: true, encoding: .utf8)
        let missing = scratch.appendingPathComponent("ttyACM9").path
        let daemon = try ControlledDaemon(devices: [wearable.devicePath, silent.devicePath, notATTY, missing])
        try daemon.waitUntilConnected(wearable.devicePath)
        try daemon.waitUntilConnected(silent.devicePath)
        #expect(try wearable.request(CommandLines.start(id: 1)).contains(#""status":"ok""#))
        try daemon.daemon.waitForLog("new wearable seen")
        try daemon.daemon.waitForLog("node=\(notATTY)")

        let status = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first)
        #expect(status.devicesConnected == 2)
        #expect(status.devicesMissing == 1)
        #expect(status.devicesAttached == 4)
        let line = try daemon.ctl(["status"]).lines.first { $0.hasPrefix("devices ") }
        #expect(
            line?.hasSuffix("2 connected, 1 waiting, 1 configured path missing") == true,
            "\(String(describing: line))"
        )

        let announced = daemon.daemon.log.split(separator: "\n").filter { $0.contains("new wearable seen") }
        #expect(announced.count == 1, "\(announced)")
        #expect(announced.first?.contains("node=\(wearable.devicePath)") == true)
    }
}
