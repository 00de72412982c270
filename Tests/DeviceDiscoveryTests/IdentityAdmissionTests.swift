import ControlProtocol
import DeviceDiscovery
import Foundation
import SerialTransport
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// Identity is what a device claims (`ID_SERIAL`), so the hub never lets two devices claim one at once.
///
/// The second is refused (its node never opened) while the first keeps its session; with `devices.allowed_serials` only
/// enrolled wearables are served. Through the real libudev against a umockdev testbed: part of ``HotplugTests``, whose
/// tests run one at a time (umockdev's testbed is process-wide).
extension HotplugTests {
    @Test func aSecondDeviceWithTheSameSerialIsRefusedAndTheFirstKeepsItsSession() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let genuine = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-C100")
        let started = try #require(try await genuine.exchange(WireCommand.start(id: 1))?.startedWorkoutID)

        // A clone copying the genuine wearable's serial, on another port.
        let clone = try harness.plugWearable(node: "ttyACM1", port: "1-2", serial: "WRB-C100")
        let identity = DeviceIdentity("Workoutd_Wearable_WRB-C100")
        #expect(await harness.waitForRefused { $0.map(\.path) == ["/dev/ttyACM1"] })
        let refused = try #require(await harness.manager.refusedDevices().first)
        #expect(refused.identity == identity)
        #expect(refused.refusal == .identityInUse(node: "/dev/ttyACM0"))
        #expect(refused.refusal.description == "identity already attached on /dev/ttyACM0")
        #expect(await harness.manager.devices().map(\.path) == ["/dev/ttyACM0"], "only the first is served")
        #expect(!clone.isNodeOpen, "the refused device's node is never opened")

        // The clone cannot end the genuine wearable's workout: nothing reads what it writes.
        clone.send(WireCommand.end(id: 2))
        #expect(await clone.readLine(timeout: .milliseconds(300)) == nil)
        #expect(try await harness.store.workout(id: started)?.endedAt == nil)

        // The first keeps working, on its own session.
        #expect(try await genuine.exchange(WireCommand.end(id: 3))?.endedWorkoutID == started)

        // Once the first is unplugged, the identity is free: the device that was refused is served.
        harness.testbed.unplug(genuine.tty)
        #expect(await harness.waitForDevices { $0.map(\.path) == ["/dev/ttyACM1"] })
        #expect(await harness.manager.refusedDevices().isEmpty)
        // (The line it wrote while refused may still sit in the pty and be answered first: skip to id 4's reply.)
        clone.send(WireCommand.start(id: 4))
        var second: Reply?
        for _ in 0..<2 {
            guard let line = await clone.readLine(timeout: .seconds(5)) else { break }
            if line.contains(#""id":4"#) {
                second = try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
                break
            }
        }
        #expect(
            second?.startedWorkoutID != nil && second?.startedWorkoutID != started,
            "started \(started), then \(String(describing: second))"
        )
        await harness.stop()
    }

    @Test func onlyEnrolledSerialsAreServedAndUnknownOnesAreRemembered() async throws {
        let harness = try await DiscoveryHarness(allowedSerials: ["Workoutd_Wearable_WRB-E001"])
        try await harness.start()
        let enrolled = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-E001")
        let stranger = try harness.plugWearable(node: "ttyACM1", port: "1-2", serial: "WRB-X999")
        #expect(try await enrolled.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        #expect(await harness.waitForRefused { $0.map(\.path) == ["/dev/ttyACM1"] })
        #expect(await harness.manager.refusedDevices().first?.refusal == .notEnrolled)
        #expect(!stranger.isNodeOpen)
        #expect(await harness.manager.devices().map(\.path) == ["/dev/ttyACM0"])

        let unknown = await harness.manager.unknownDevices()
        #expect(unknown.map(\.identity) == [DeviceIdentity("Workoutd_Wearable_WRB-X999")])
        #expect(unknown.first?.path == "/dev/ttyACM1")
        #expect(unknown.first?.sightings == 1)

        // Unplugged, it leaves the refused list but is still remembered as seen; plugged again, counted again.
        harness.testbed.unplug(stranger.tty)
        #expect(await harness.waitForRefused { $0.isEmpty })
        let back = try harness.plugWearable(node: "ttyACM2", port: "1-3", serial: "WRB-X999")
        #expect(await harness.waitForRefused { $0.map(\.path) == ["/dev/ttyACM2"] })
        #expect(await harness.manager.unknownDevices().first?.sightings == 2)
        #expect(await harness.manager.unknownDevices().first?.path == "/dev/ttyACM2")

        // Enrolled by a reload: served at once, and no longer unknown.
        await harness.manager.update(allowedSerials: ["Workoutd_Wearable_WRB-E001", "Workoutd_Wearable_WRB-X999"])
        #expect(await harness.waitForDevices { $0.map(\.path) == ["/dev/ttyACM0", "/dev/ttyACM2"] })
        #expect(await harness.manager.unknownDevices().isEmpty)
        #expect(try await back.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        await harness.stop()
    }

    @Test func aConfiguredPathNeedsNoEnrolment() async throws {
        let harness = try await DiscoveryHarness(allowedSerials: [])
        try await harness.start()
        let pty = try PseudoTerminal()
        await harness.manager.attach(DeviceSpec(path: pty.devicePath, identity: DeviceIdentity(pty.devicePath)))
        #expect(await harness.waitForDevices { $0.map(\.path) == [pty.devicePath] })
        #expect(await harness.manager.refusedDevices().isEmpty)
        await harness.stop()
    }
}

/// The same through the daemon and `workoutctl`, as an operator sees it.
///
/// The daemon process inherits the umockdev testbed (its environment), so its libudev sees the mock wearables.
extension HotplugTests {
    @Test(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes"))
    func workoutctlShowsRefusedDevicesAndListsUnknownOnes() async throws {
        let harness = try await DiscoveryHarness()
        let genuine = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-D001")
        let clone = try harness.plugWearable(node: "ttyACM1", port: "1-2", serial: "WRB-D001")
        let stranger = try harness.plugWearable(node: "ttyACM2", port: "1-3", serial: "WRB-Z999")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "identity-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("workoutd.yaml").path
        // `devices` as a section: no paths, one enrolled wearable.
        try "devices:\n  allowed_serials: [Workoutd_Wearable_WRB-D001]\n".write(
            toFile: config,
            atomically: true,
            encoding: .utf8
        )
        let socket = directory.appendingPathComponent("control.sock").path
        let daemon = try DaemonProcess(
            arguments: [
                "--config", config, "--control-socket", socket, "--state-dir",
                directory.appendingPathComponent("state").path,
                "--log-level", "info",
            ],
            readiness: true
        )
        defer { daemon.stop() }
        // READY=1: discovery has made its first scan and the control socket listens.
        try daemon.waitUntilReady()
        #expect(try await genuine.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil, "\(daemon.log)")
        #expect(!clone.isNodeOpen && !stranger.isNodeOpen)

        let table = try Workoutctl.run(["--socket", socket, "devices"])
        #expect(table.status == 0)
        let rows = table.lines.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(rows.contains { $0.hasPrefix("Workoutd_Wearable_WRB-D001 /dev/ttyACM0 connected") }, "\(table.stdout)")
        #expect(
            rows.contains {
                $0.hasPrefix(
                    "Workoutd_Wearable_WRB-D001 /dev/ttyACM1 refused: identity already attached on /dev/ttyACM0"
                )
            },
            "\(table.stdout)"
        )
        #expect(
            rows.contains {
                $0.hasPrefix("Workoutd_Wearable_WRB-Z999 /dev/ttyACM2 refused: not in devices.allowed_serials")
            },
            "\(table.stdout)"
        )

        let json = try Workoutctl.run(["--socket", socket, "devices", "--json"])
        let reports = try json.lines.map {
            try ControlSocket.makeDecoder().decode(DeviceReport.self, from: Data($0.utf8))
        }
        #expect(reports.map(\.node) == ["/dev/ttyACM0", "/dev/ttyACM1", "/dev/ttyACM2"])
        #expect(
            reports.map(\.refused) == [
                nil, "identity already attached on /dev/ttyACM0", "not in devices.allowed_serials",
            ]
        )

        let unknown = try Workoutctl.run(["--socket", socket, "devices", "--unknown", "--json"])
        let seen = try unknown.lines.map {
            try ControlSocket.makeDecoder().decode(UnknownDeviceReport.self, from: Data($0.utf8))
        }
        #expect(seen.map(\.identity) == ["Workoutd_Wearable_WRB-Z999"])
        #expect(seen.first?.node == "/dev/ttyACM2")

        #expect(
            daemon.log.contains("refusing device: its identity is already attached on another node"),
            "\(daemon.log)"
        )
        #expect(daemon.log.contains("refusing device: not enrolled in devices.allowed_serials"))
        #expect(daemon.log.contains("new wearable seen"))
        // The rules read as written: no brackets or quotes escaped into the line that names them at start.
        let enabled = daemon.log.split(separator: "\n").first { $0.contains("device discovery ready") }
        #expect(enabled?.contains(" rules=") == true, "\(daemon.log)")
        #expect(enabled?.contains("[") == false && enabled?.contains(#"\""#) == false, "\(String(describing: enabled))")
        daemon.stop()
        await harness.stop()
    }
}
