import Logging
import Synchronization
import SerialTransport
import ServiceLifecycle
import WorkoutEngine

/// Serves every tty that the match rules say is ours, as it appears: the ones present at start-up
/// and each one plugged in later; stops serving a device when udev reports it removed.
///
/// It only tells the ``DeviceManager`` what to attach and detach; the manager owns the pipelines
/// (and their draining at shutdown, through `SerialDeviceService`).
public final class DiscoveryService: Service, Sendable {
    private let manager: DeviceManager
    /// Swapped by a configuration reload; applies to devices seen from then on.
    private let matcher: Mutex<DeviceMatcher>
    private let baud: Mutex<UInt32>
    private let policy: ReconnectPolicy
    private let logger: Logger
    private let readiness = ReadinessSignal()

    public init(
        manager: DeviceManager, matcher: DeviceMatcher, baud: UInt32 = 115_200,
        policy: ReconnectPolicy = .discovered, logger: Logger
    ) {
        self.manager = manager
        self.matcher = Mutex(matcher)
        self.baud = Mutex(baud)
        self.policy = policy
        self.logger = logger
    }

    /// New match rules and baud rate (a reload): devices that appear or change from now on are matched against
    /// them and opened at `baud` (when given); devices already served stay connected.
    public func update(matcher: DeviceMatcher, baud: UInt32? = nil) {
        self.matcher.withLock { $0 = matcher }
        if let baud { self.baud.withLock { $0 = baud } }
        logger.info("device match rules updated", metadata: ["rules": "\(matcher.rules.map(\.description))"])
    }

    /// Returns once the hotplug monitor is armed and the devices present at start-up have been
    /// handed to the manager (the moment to tell systemd `READY=1`); throws if libudev failed first.
    public func waitUntilReady() async throws {
        try await readiness.wait()
    }

    public func run() async throws {
        let monitor: UdevMonitor
        let present: [DiscoveredDevice]
        do {
            // Arm first, then enumerate: a device plugged in between shows up in both, and
            // attaching the same node twice is harmless.
            monitor = try UdevMonitor(subsystem: "tty")
            present = try await monitor.enumerate()
        } catch {
            logger.critical("device discovery could not start: \(error)")
            readiness.fail(error)
            throw error
        }
        defer { monitor.stop() }

        var served: [String: DeviceIdentity] = [:]
        for device in present {
            await handle(device, served: &served)
        }
        logger.info("device discovery ready", metadata: [
            "present": "\(present.count)", "served": "\(served.count)",
            "rules": "\(matcher.withLock { $0 }.rules.map(\.description))",
        ])
        readiness.signal()

        for await device in monitor.events.cancelOnGracefulShutdown() {
            await handle(device, served: &served)
        }
    }

    /// `served` maps the nodes this service attached to who is on them, so a remove only ever
    /// detaches what discovery itself attached (never a `--device` path).
    private func handle(_ device: DiscoveredDevice, served: inout [String: DeviceIdentity]) async {
        guard let node = device.devnode else { return }
        var logger = self.logger
        logger[metadataKey: "node"] = "\(node)"
        logger[metadataKey: "action"] = "\(device.action)"

        switch device.action {
        case .present, .add, .change:
            guard let rule = matcher.withLock({ $0 }).firstMatch(device) else {
                if served.removeValue(forKey: node) != nil {
                    logger.notice("device no longer matches any rule; closing it")
                    await manager.detach(path: node)
                } else {
                    logger.debug("tty matches no rule; leaving it alone")
                }
                return
            }
            let identity = device.identity
            logger[metadataKey: "device"] = "\(identity)"
            if served[node] != identity {
                logger.info("serving discovered device", metadata: ["rule": "\(rule)", "syspath": "\(device.syspath)"])
            }
            served[node] = identity
            await manager.attach(DeviceSpec(path: node, identity: identity, baud: baud.withLock { $0 }, policy: policy))
        case .remove:
            guard let identity = served.removeValue(forKey: node) else { return }
            logger.info("device removed", metadata: ["device": "\(identity)"])
            await manager.detach(path: node)
        case .other:
            return
        }
    }
}
