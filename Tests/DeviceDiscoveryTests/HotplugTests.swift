import DeviceDiscovery
import Foundation
import SerialTransport
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// CI sets `WORKOUTD_REQUIRE_UMOCKDEV=1` so that forgetting the wrapper fails instead of skipping.
@Test(.enabled(if: ProcessInfo.processInfo.environment["WORKOUTD_REQUIRE_UMOCKDEV"] == "1"))
func hotplugTestsRunUnderUmockdevWrapper() {
    #expect(
        MockUdevTestbed.isPreloaded,
        "run the tests as: umockdev-wrapper swift test ... (LD_PRELOAD=libumockdev-preload.so.0)"
    )
}

/// Discovery through the real libudev, against devices in a umockdev testbed whose nodes are ptys.
///
/// The testbed is process-wide, hence serialized.
@Suite(
    .serialized,
    .enabled(if: MockUdevTestbed.isPreloaded, "needs umockdev-wrapper (LD_PRELOAD of libumockdev-preload)")
)
struct HotplugTests {
    @Test func servesAMatchingDevicePresentAtStartUp() async throws {
        let harness = try await DiscoveryHarness()
        // Plugged before the daemon starts: its add event goes unheard; the start-up scan finds it.
        let wearable = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0001")
        try await harness.start()

        let reply = try await wearable.exchange(WireCommand.start(id: 1))
        #expect(reply?.startedWorkoutID != nil)
        let workouts = try await harness.store.workouts(
            device: DeviceIdentity("Workoutd_Wearable_WRB-0001"),
            limit: nil
        )
        #expect(workouts.count == 1)
        await harness.stop()
    }

    @Test func servesADeviceAddedAfterStartAndAcksItsCommand() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        #expect(await harness.manager.devices().isEmpty)

        let wearable = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0002")
        wearable.send(WireCommand.start(id: 1))
        let line = await wearable.readLine(timeout: .seconds(5))
        #expect(line?.contains(#""status":"ok""#) == true)
        #expect(line?.contains(#""id":1"#) == true)
        await harness.stop()
    }

    @Test func removalMidLineClosesOnlyThatDeviceAndLosesNothing() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let leaving = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0003")
        let staying = try harness.plugWearable(node: "ttyACM1", port: "1-2", serial: "WRB-0004")
        let started = try #require(try await leaving.exchange(WireCommand.start(id: 1))?.startedWorkoutID)
        #expect(try await staying.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)

        leaving.write(Array(#"{"command_type":"end_wor"#.utf8))
        try await Task.sleep(for: .milliseconds(50))
        harness.testbed.unplug(leaving.tty)

        #expect(await harness.waitForDevices { $0.map(\.path) == [staying.tty.devnode] })
        // The device leaves the list at once; its channel closes on its event loop right after (CI once saw
        // the node still open at the first look), so the close is awaited, within a bound.
        let closeDeadline = ContinuousClock.now + .seconds(2)
        while leaving.isNodeOpen, ContinuousClock.now < closeDeadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(!leaving.isNodeOpen, "the removed device's node must be closed")
        #expect(await leaving.readLine(timeout: .milliseconds(200)) == nil, "a half-sent line is never answered")
        #expect(try await staying.exchange(WireCommand.end(id: 2))?.endedWorkoutID != nil)
        let kept = try await harness.store.workout(id: started)
        #expect(kept?.endedAt == nil, "the committed start survives, still active")
        await harness.stop()
    }

    @Test func replugUnderAnotherNodeResumesTheActiveWorkout() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let first = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0005")
        let started = try #require(try await first.exchange(WireCommand.start(id: 1))?.startedWorkoutID)
        harness.testbed.unplug(first.tty)
        #expect(await harness.waitForDevices { $0.isEmpty })

        // Same wearable, other port, renumbered: the kernel calls it ttyACM3 now.
        let again = try harness.plugWearable(node: "ttyACM3", port: "1-4", serial: "WRB-0005")
        let restart = try await again.exchange(WireCommand.start(id: 2))
        #expect(restart?.outcome == .error(.workoutAlreadyActive))
        let ended = try await again.exchange(WireCommand.end(id: 3))
        #expect(ended?.endedWorkoutID == started)
        await harness.stop()
    }

    @Test func servesTwoDevicesAtOnceEachWithItsOwnSession() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let left = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0006")
        let right = try harness.plugWearable(node: "ttyACM1", port: "1-2", serial: "WRB-0007")

        left.send(WireCommand.start(id: 1, location: "Left"))
        right.send(WireCommand.start(id: 1, location: "Right"))
        async let leftLine = left.readLine(timeout: .seconds(5))
        async let rightLine = right.readLine(timeout: .seconds(5))
        let (leftReply, rightReply) = await (leftLine, rightLine)
        #expect(leftReply?.contains(#""status":"ok""#) == true)
        #expect(rightReply?.contains(#""status":"ok""#) == true)

        #expect(try await left.exchange(WireCommand.end(id: 2))?.endedWorkoutID != nil)
        #expect(try await right.exchange(WireCommand.start(id: 3))?.outcome == .error(.workoutAlreadyActive))
        let identities = Set(await harness.manager.devices().map(\.identity))
        #expect(
            identities == [DeviceIdentity("Workoutd_Wearable_WRB-0006"), DeviceIdentity("Workoutd_Wearable_WRB-0007")]
        )
        await harness.stop()
    }

    @Test func leavesANonMatchingTTYAlone() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let modem = MockWearable(
            tty: try harness.testbed.plugTTY(
                name: "ttyUSB0",
                usbPort: "1-3",
                properties: [
                    "ID_SERIAL": "Acme_LTE_Modem_0042", "ID_VENDOR_ID": "1234", "ID_MODEL_ID": "5678",
                    "ID_USB_DRIVER": "option",
                ]
            )
        )
        let wearable = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0008")
        #expect(try await wearable.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)

        modem.send(WireCommand.start(id: 1))
        #expect(await modem.readLine(timeout: .milliseconds(300)) == nil)
        #expect(!modem.isNodeOpen, "a tty that matches no rule is never opened")
        #expect(await harness.manager.devices().map(\.path) == [wearable.tty.devnode])
        await harness.stop()
    }

    @Test func vendorAndProductRuleFindsAWearableWithoutTheUdevRule() async throws {
        let harness = try await DiscoveryHarness(rules: ["ID_VENDOR_ID=1209 ID_MODEL_ID=a7e1 ID_USB_DRIVER=cdc_acm"])
        try await harness.start()
        let bare = try harness.plugWearable(
            node: "ttyACM0",
            port: "1-1",
            serial: "WRB-0009",
            properties: ["WORKOUTD_DEVICE": "0"]
        )
        #expect(try await bare.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        await harness.stop()
    }

    @Test func newRulesFromAReloadApplyToDevicesPluggedInAfterIt() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let served = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0010")
        #expect(try await served.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        let early = try harness.plugWearable(
            node: "ttyACM1",
            port: "1-2",
            serial: "WRB-0011",
            properties: ["WORKOUTD_DEVICE": "0"]
        )
        #expect(await early.readLine(timeout: .milliseconds(300)) == nil && !early.isNodeOpen, "no rule matches it yet")

        harness.service.update(matcher: try DeviceMatcher(parsing: ["ID_VENDOR_ID=1209 ID_MODEL_ID=a7e1"]))
        let late = try harness.plugWearable(
            node: "ttyACM2",
            port: "1-3",
            serial: "WRB-0012",
            properties: ["WORKOUTD_DEVICE": "0"]
        )
        #expect(try await late.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil, "served under the new rule")
        #expect(
            try await served.exchange(WireCommand.end(id: 2))?.isSuccess == true,
            "the open device stayed connected"
        )
        await harness.stop()
    }

    @Test func discoveryTurnedOffByAReloadReleasesItsDevicesAndTurnedOnServesWhatMatches() async throws {
        let harness = try await DiscoveryHarness()
        let found = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0020")
        // A configured device (`devices:`) on a tty no rule matches: not discovery's to release.
        let configured = try harness.plugWearable(
            node: "ttyACM1",
            port: "1-2",
            serial: "WRB-0021",
            properties: ["WORKOUTD_DEVICE": "0"]
        )
        await harness.manager.attach(DeviceSpec(path: configured.tty.devnode, identity: "configured"))
        try await harness.start()
        #expect(try await found.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        #expect(try await configured.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)

        // discovery.enabled: false
        harness.service.update(matcher: nil)
        #expect(
            await harness.waitForDevices { $0.map(\.path) == [configured.tty.devnode] },
            "the discovered device is released"
        )
        // Released from the list at once, its channel closed on its event loop right after: awaited, within a bound.
        let closeDeadline = ContinuousClock.now + .seconds(5)
        while found.isNodeOpen, ContinuousClock.now < closeDeadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(!found.isNodeOpen, "its node is closed")
        #expect(
            try await configured.exchange(WireCommand.end(id: 2))?.isSuccess == true,
            "the configured one stays connected"
        )
        // Plugged while discovery is off: nobody announces it to us again, so only the scan on enabling finds it.
        let pluggedWhileOff = try harness.plugWearable(node: "ttyACM2", port: "1-3", serial: "WRB-0022")

        // discovery.enabled: true
        harness.service.update(matcher: try DeviceMatcher(parsing: DeviceMatcher.defaultRules))
        #expect(try await found.exchange(WireCommand.end(id: 2))?.isSuccess == true, "served again, its workout intact")
        #expect(try await pluggedWhileOff.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        #expect(
            Set(await harness.manager.devices().map(\.path))
                == [found.tty.devnode, configured.tty.devnode, pluggedWhileOff.tty.devnode]
        )
        await harness.stop()
    }

    @Test func opensANodeThatBecomesUsableOnlyAfterADelay() async throws {
        let harness = try await DiscoveryHarness()
        try await harness.start()
        let wearable = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0010", nodeReady: false)
        #expect(await harness.waitForDevices { $0.count == 1 }, "announced, so discovery hands it to the manager")
        try await Task.sleep(for: .milliseconds(300))
        #expect(!wearable.isNodeOpen)

        try harness.testbed.makeNodeAvailable(wearable.tty)
        #expect(try await wearable.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        await harness.stop()
    }

    @Test func givesUpOnANodeThatNeverBecomesUsableAndServesItWhenAnnouncedAgain() async throws {
        let policy = ReconnectPolicy(
            initialDelay: .milliseconds(5),
            maximumDelay: .milliseconds(50),
            giveUpAfter: .milliseconds(250),
            reopenAfterClose: false
        )
        let harness = try await DiscoveryHarness(policy: policy)
        try await harness.start()
        let wearable = try harness.plugWearable(node: "ttyACM0", port: "1-1", serial: "WRB-0011", nodeReady: false)
        #expect(await harness.waitForDevices { $0.count == 1 })
        #expect(await harness.waitForDevices { $0.isEmpty }, "bounded retries: the attempt ends")

        try harness.testbed.makeNodeAvailable(wearable.tty)
        harness.testbed.announce(wearable.tty, action: "change")
        #expect(try await wearable.exchange(WireCommand.start(id: 1))?.startedWorkoutID != nil)
        await harness.stop()
    }
}
