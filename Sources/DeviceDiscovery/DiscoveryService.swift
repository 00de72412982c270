import Logging
import SerialTransport
import ServiceLifecycle
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Serves every tty that the match rules say is ours, as it appears.
///
/// The ones present at start-up and each one plugged in later; stops serving a device when udev reports it removed.
///
/// It only tells the ``DeviceManager`` what to attach and detach; the manager owns the pipelines
/// (and their draining at shutdown, through `SerialDeviceService`).
public final class DiscoveryService: Service, Sendable {
    private let manager: DeviceManager
    /// Swapped by a configuration reload; applies to devices seen from then on. `nil`: discovery is disabled.
    private let matcher: Mutex<DeviceMatcher?>
    private let baud: Mutex<UInt32>
    private let policy: ReconnectPolicy
    private let logger: Logger
    private let readiness = ReadinessSignal()
    /// The monitor of the pass running now, stopped when a reload disables discovery.
    private let monitor = Mutex<UdevMonitor?>(nil)
    /// Wakes a disabled service when a reload enables it.
    private let enabled: AsyncStream<Void>
    private let enable: AsyncStream<Void>.Continuation

    /// With `matcher` `nil` the service starts disabled: it touches no udev until a reload enables it.
    public init(
        manager: DeviceManager,
        matcher: DeviceMatcher?,
        baud: UInt32 = SerialTransportConfiguration.defaultBaud,
        policy: ReconnectPolicy = .discovered,
        logger: Logger
    ) {
        self.manager = manager
        self.matcher = Mutex(matcher)
        self.baud = Mutex(baud)
        self.policy = policy
        self.logger = logger
        (enabled, enable) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// New match rules and baud rate (a reload).
    ///
    /// Devices that appear or change from now on are matched against them and opened at `baud` (when given); devices
    /// already served stay connected. `nil` rules disable discovery: the monitor stops and the devices it attached are
    /// released (configured ones are not its own). Rules given to a disabled service start it: the ttys present are
    /// scanned and the matching ones served.
    public func update(matcher: DeviceMatcher?, baud: UInt32? = nil) {
        let wasEnabled = self.matcher.withLock { current in
            defer { current = matcher }
            return current != nil
        }
        if let baud { self.baud.withLock { $0 = baud } }
        switch (wasEnabled, matcher) {
        case (true, nil):
            logger.notice("device discovery disabled; releasing the devices it found")
            monitor.withLock { $0 }?.stop()
        case (false, let matcher?):
            logger.notice(
                "device discovery enabled",
                metadata: ["rules": .array(matcher.rules.map { .string($0.description) })]
            )
            enable.yield()
        case (true, let matcher?):
            logger.info(
                "device match rules updated",
                metadata: ["rules": .array(matcher.rules.map { .string($0.description) })]
            )
        case (false, nil):
            break
        }
    }

    /// Returns once the monitor is armed and the devices present at start-up are handed to the manager.
    ///
    /// That is the moment to tell systemd `READY=1`. Returns at once when discovery is disabled; throws if libudev
    /// failed first.
    public func waitUntilReady() async throws {
        try await readiness.wait()
    }

    public func run() async throws {
        var started = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if matcher.withLock({ $0 }) != nil {
                do {
                    try await discover()
                } catch {
                    // At start the daemon cannot do what it was asked; after a reload it keeps serving the rest.
                    guard started else { throw error }
                }
            } else {
                readiness.signal()
            }
            started = true
            // Disabled (at start or by a reload), or failed to start after a reload: the next reload that
            // enables discovery starts it again.
            for await _ in enabled.cancelOnGracefulShutdown() { break }
        }
    }

    /// One pass of discovery: arms a monitor, serves what is present and what appears.
    ///
    /// It runs until shutdown or a reload disables discovery (the monitor is stopped), then releases what it attached
    /// unless shutting down.
    private func discover() async throws {
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
        self.monitor.withLock { $0 = monitor }
        defer { self.monitor.withLock { $0 = nil } }
        // A reload that disabled discovery while the monitor was being armed found no monitor to stop.
        if matcher.withLock({ $0 }) == nil { monitor.stop() }

        var served: [String: DeviceIdentity] = [:]
        for device in present {
            await handle(device, served: &served)
        }
        logger.info(
            "device discovery ready",
            metadata: [
                "present": "\(present.count)", "served": "\(served.count)",
                "rules": .array((matcher.withLock { $0 }?.rules ?? []).map { .string($0.description) }),
            ]
        )
        readiness.signal()

        for await device in monitor.events.cancelOnGracefulShutdown() {
            await handle(device, served: &served)
        }
        // At shutdown the manager drains every device; disabled by a reload, discovery lets go of its own.
        guard !Task.isShuttingDownGracefully && !Task.isCancelled else { return }
        for node in served.keys.sorted() {
            await manager.detach(path: node)
        }
        logger.notice("device discovery stopped", metadata: ["released": "\(served.keys.sorted())"])
    }

    /// `served` maps the nodes this service attached to who is on them.
    ///
    /// So a remove only ever detaches what discovery itself attached (never a `--device` path).
    private func handle(_ device: DiscoveredDevice, served: inout [String: DeviceIdentity]) async {
        guard let node = device.devnode else { return }
        var logger = self.logger
        logger[metadataKey: "node"] = "\(node)"
        logger[metadataKey: "action"] = "\(device.action)"

        switch device.action {
        case .present, .add, .change:
            guard let rule = matcher.withLock({ $0 })?.firstMatch(device) else {
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
            await manager.attach(
                DeviceSpec(
                    path: node,
                    identity: identity,
                    baud: baud.withLock { $0 },
                    policy: policy,
                    requiresEnrolment: true
                )
            )
        case .remove:
            guard let identity = served.removeValue(forKey: node) else { return }
            logger.info("device removed", metadata: ["device": "\(identity)"])
            await manager.detach(path: node)
        case .other:
            return
        }
    }
}
