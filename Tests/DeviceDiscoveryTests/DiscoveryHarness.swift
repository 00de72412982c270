import DeviceDiscovery
import Foundation
import Logging
import NIOPosix
import SerialTransport
import Synchronization
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// The daemon's discovery half, in-process.
///
/// A umockdev testbed, the real ``DiscoveryService`` and ``DeviceManager`` over a ``WorkoutEngine`` with an in-memory
/// store.
final class DiscoveryHarness: Sendable {
    let testbed = MockUdevTestbed()
    let store = InMemoryWorkoutStore()
    let engine: WorkoutEngine
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let manager: DeviceManager
    let service: DiscoveryService
    private let running = Mutex<Task<Void, any Error>?>(nil)

    init(
        rules: [String] = DeviceMatcher.defaultRules,
        policy: ReconnectPolicy = .discovered,
        allowedSerials: Set<String>? = nil
    ) async throws {
        var logger = Logger(label: "workoutd.test")
        logger.logLevel = ProcessInfo.processInfo.environment["WORKOUTD_TEST_LOG"] != nil ? .debug : .critical
        engine = try await WorkoutEngine(store: store)
        manager = DeviceManager(
            group: group,
            engine: engine,
            options: PipelineOptions(),
            logger: logger,
            allowedSerials: allowedSerials
        )
        service = DiscoveryService(
            manager: manager,
            matcher: try DeviceMatcher(parsing: rules),
            policy: policy,
            logger: logger
        )
    }

    /// Runs discovery and returns once the start-up scan is done and the monitor armed.
    func start() async throws {
        let service = self.service
        running.withLock { $0 = Task { try await service.run() } }
        try await service.waitUntilReady()
    }

    func stop() async {
        let task = running.withLock { $0 }
        task?.cancel()
        _ = await task?.result
        await manager.drainAll(timeout: .seconds(2))
        try? await group.shutdownGracefully()
    }

    /// Plugs in a wearable with the properties our udev rule and udev's `usb_id` would give it.
    func plugWearable(
        node: String,
        port: String,
        serial: String,
        properties extra: [String: String] = [:],
        nodeReady: Bool = true
    ) throws -> MockWearable {
        var properties = Self.wearableProperties(serial: serial)
        properties.merge(extra) { _, new in new }
        return MockWearable(
            tty: try testbed.plugTTY(name: node, usbPort: port, properties: properties, nodeReady: nodeReady)
        )
    }

    static func wearableProperties(serial: String) -> [String: String] {
        [
            "ID_SERIAL": "Workoutd_Wearable_\(serial)",
            "ID_SERIAL_SHORT": serial,
            "ID_VENDOR_ID": "1209",
            "ID_MODEL_ID": "a7e1",
            "ID_USB_DRIVER": "cdc_acm",
            "WORKOUTD_DEVICE": "1",
            "ID_MM_DEVICE_IGNORE": "1",
            "DEVLINKS": "/dev/serial/by-id/usb-Workoutd_Wearable_\(serial)-if00 /dev/wearable/\(serial)",
        ]
    }

    /// Waits until `condition` holds over the manager's device list, or `timeout` passes.
    func waitForDevices(timeout: Duration = .seconds(5), _ condition: ([DeviceStats]) -> Bool) async -> Bool {
        await waitFor(timeout: timeout, { await $0.devices() }, condition)
    }

    /// Waits until `condition` holds over the manager's refused devices, or `timeout` passes.
    func waitForRefused(timeout: Duration = .seconds(5), _ condition: ([RefusedDevice]) -> Bool) async -> Bool {
        await waitFor(timeout: timeout, { await $0.refusedDevices() }, condition)
    }

    private func waitFor<Value>(
        timeout: Duration,
        _ read: (DeviceManager) async -> Value,
        _ condition: (Value) -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(await read(manager)) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(await read(manager))
    }
}

extension MockWearable {
    /// Sends one command line and decodes the reply line, or `nil` if none came within `timeout`.
    func exchange(_ command: String, timeout: Duration = .seconds(5)) async throws -> Reply? {
        send(command)
        guard let line = await readLine(timeout: timeout) else { return nil }
        return try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
    }
}

/// Command lines exactly as the wearable sends them.
enum WireCommand {
    static func start(id: Int, location: String = "Gym") -> String {
        CommandLines.start(id: CommandLines.ID(id), location: location)
    }

    static func end(id: Int) -> String {
        CommandLines.end(id: CommandLines.ID(id))
    }
}

extension Reply {
    var startedWorkoutID: Int64? {
        if case .ok(.workoutStarted(let id)) = outcome { id } else { nil }
    }

    var endedWorkoutID: Int64? {
        if case .ok(.workoutEnded(let id, _)) = outcome { id } else { nil }
    }
}
