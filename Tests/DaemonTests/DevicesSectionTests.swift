import ControlProtocol
import Foundation
import Testing
import WorkoutdTesting

/// `devices:` is a list of paths (as always) or a section with `paths:` and `allowed_serials:`.
///
/// The section is for enrolment: a new wearable is announced once, and not again after a restart when the store knows
/// it.
@Suite struct DevicesSectionTests {
    private func checkConfig(
        _ yaml: String,
        environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String, file: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "devices-\(UUID().uuidString.prefix(8)).yaml"
        ).path
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = try DaemonProcess(arguments: ["check-config", "--config", file], environment: environment)
        return (try process.waitForExit(), process.log, file)
    }

    @Test func bothFormsOfDevicesAreValid() throws {
        #expect(try checkConfig("devices: [/dev/ttyS4]\n").status == 0)
        #expect(try checkConfig("devices:\n  - /dev/ttyS4\n").status == 0)
        #expect(
            try checkConfig("devices:\n  paths: [/dev/ttyS4]\n  allowed_serials: [Acme_Band_0001, Acme_Band_0002]\n")
                .status == 0
        )
        #expect(try checkConfig("devices:\n  allowed_serials: []\n").status == 0)
        #expect(
            try checkConfig(
                "log_level: info\n",
                environment: ["WORKOUTD_DEVICES_ALLOWED_SERIALS": "Acme_Band_0001,Acme_Band_0002"]
            ).status == 0
        )
    }

    @Test func aMistakeInTheDevicesSectionIsNamed() throws {
        let typo = try checkConfig("devices:\n  allowed_serial: [Acme_Band_0001]\n")
        #expect(typo.status == 78)
        #expect(
            typo.output
                == "workoutd: \(typo.file):2: configuration key 'devices.allowed_serial': unknown key; did you mean 'devices.allowed_serials'?\n"
        )
        let scalar = try checkConfig("devices:\n  allowed_serials: Acme_Band_0001\n")
        #expect(scalar.status == 78)
        #expect(
            scalar.output.contains("configuration key 'devices.allowed_serials': must be a list"),
            "\(scalar.output)"
        )
    }

    @Test func pathsInTheSectionAreServedAndANewWearableIsAnnouncedOnce() async throws {
        let wearable = try SimulatedWearable()
        let configuration = "log_level: info\ndevices:\n  paths: [\(wearable.devicePath)]\n"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "devices-\(UUID().uuidString.prefix(8))"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        try await DaemonTestHarness.run(.inProcess, configuration: configuration, directory: directory) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            // Announced once it answers as a wearable: its first command, not the open.
            #expect(
                try daemon.ctl(["send", "--device", wearable.devicePath, CommandLines.start(id: 1)]).status == 0
            )
            #expect(!daemon.log.contains("new wearable seen"), "a command from the control socket is not the wearable")
            #expect(try wearable.request(CommandLines.end(id: 2)).contains(#""status":"ok""#))
            try daemon.waitForLog("new wearable seen")
            #expect(daemon.log.contains("device=\(wearable.devicePath)"))
        }
        // Restarted on the same state: the store has its session, so it is not announced again.
        try await DaemonTestHarness.run(.inProcess, configuration: configuration, directory: directory) { again in
            try again.waitUntilConnected(wearable.devicePath)
            #expect(try wearable.request(CommandLines.start(id: 3)).contains(#""status":"ok""#))
            #expect(try again.ctl(["status"]).status == 0)
            #expect(!again.log.contains("new wearable seen"), "\(again.log)")
        }
    }
}
