import CLibudev
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// libudev for one subsystem: the devices present now, and every add/change/remove after that.
///
/// The monitor listens on udev's netlink group ("udev", i.e. after udev's rules have run, so
/// `WORKOUTD_DEVICE` and `ID_SERIAL` are set). Its socket is watched with a `DispatchSource` read
/// source: the handler runs only when the kernel has queued a message — no polling, no thread of
/// our own. SwiftNIO is not used for this descriptor because its public API can watch a descriptor
/// only through a channel that reads the bytes itself, and libudev must do the `recvmsg` (it checks
/// the sender's credentials and decodes the message). Events are turned into values on the
/// monitor's queue and handed out through ``events``.
public final class UdevMonitor: @unchecked Sendable {
    // @unchecked: libudev objects are not thread-safe; `udev` and `monitor` are touched only on `queue`
    // (and in `init`/the source's cancel handler, before and after any other use).
    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    private let subsystem: String
    private let queue: DispatchQueue
    private let source: any DispatchSourceRead

    /// Every event the monitor receives from arming on, in order. Ends when ``stop()`` is called.
    public let events: AsyncStream<DiscoveredDevice>
    private let continuation: AsyncStream<DiscoveredDevice>.Continuation

    /// Creates the monitor and arms it.
    ///
    /// Events from this point on are queued in ``events``, so enumerating afterwards cannot miss a device that appears
    /// in between.
    public init(subsystem: String = "tty") throws(UdevError) {
        guard let udev = udev_new() else { throw UdevError(operation: "udev_new", errno: errno) }
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else {
            let error = UdevError(operation: "udev_monitor_new_from_netlink", errno: errno)
            udev_unref(udev)
            throw error
        }
        var status = udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil)
        if status >= 0 { status = udev_monitor_enable_receiving(monitor) }
        guard status >= 0 else {
            udev_monitor_unref(monitor)
            udev_unref(udev)
            throw UdevError(operation: "arming the udev monitor", errno: -status)
        }
        // A burst of plugs (a hub with many wearables) must not overflow the socket before we read it.
        // Needs CAP_NET_ADMIN to exceed rmem_max; without it libudev keeps the default, which is fine.
        _ = udev_monitor_set_receive_buffer_size(monitor, 4 * 1024 * 1024)

        self.udev = udev
        self.monitor = monitor
        self.subsystem = subsystem
        self.queue = DispatchQueue(label: "workoutd.udev-monitor")
        (events, continuation) = AsyncStream.makeStream(of: DiscoveredDevice.self)
        source = DispatchSource.makeReadSource(fileDescriptor: udev_monitor_get_fd(monitor), queue: queue)
        // The handlers capture the pointers, not `self`: Dispatch runs the cancel handler only after the
        // last event handler has returned, so the unrefs there cannot race a receive.
        source.setEventHandler { [monitor, continuation] in Self.receivePending(from: monitor, into: continuation) }
        source.setCancelHandler { [udev, monitor, continuation] in
            continuation.finish()
            udev_monitor_unref(monitor)
            udev_unref(udev)
        }
        source.activate()
    }

    deinit {
        source.cancel()
    }

    /// Stops listening; ``events`` ends after the events already received.
    public func stop() {
        source.cancel()
    }

    /// The devices of the subsystem that exist now.
    ///
    /// Each is reported with action ``DiscoveredDevice/Action/present``.
    public func enumerate() async throws(UdevError) -> [DiscoveredDevice] {
        let result: Result<[DiscoveredDevice], UdevError> = await withCheckedContinuation { done in
            queue.async { done.resume(returning: self.enumerateOnQueue()) }
        }
        return try result.get()
    }

    private func enumerateOnQueue() -> Result<[DiscoveredDevice], UdevError> {
        guard let enumerate = udev_enumerate_new(udev) else {
            return .failure(UdevError(operation: "udev_enumerate_new", errno: errno))
        }
        defer { udev_enumerate_unref(enumerate) }
        var status = udev_enumerate_add_match_subsystem(enumerate, subsystem)
        if status >= 0 { status = udev_enumerate_scan_devices(enumerate) }
        guard status >= 0 else {
            return .failure(UdevError(operation: "enumerating \(subsystem) devices", errno: -status))
        }

        var devices: [DiscoveredDevice] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            entry = udev_list_entry_get_next(current)
            // A device can vanish between the scan and this lookup; it simply is not present any more.
            guard let syspath = udev_list_entry_get_name(current),
                let device = udev_device_new_from_syspath(udev, syspath)
            else { continue }
            if let copied = DiscoveredDevice(copying: device, action: .present) {
                devices.append(copied)
            }
            udev_device_unref(device)
        }
        return .success(devices)
    }

    /// Runs on `queue` when the socket is readable; the socket is non-blocking, so this drains it.
    private static func receivePending(
        from monitor: OpaquePointer,
        into continuation: AsyncStream<DiscoveredDevice>.Continuation
    ) {
        while let device = udev_monitor_receive_device(monitor) {
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? "change"
            if let copied = DiscoveredDevice(copying: device, action: DiscoveredDevice.Action(udevAction: action)) {
                continuation.yield(copied)
            }
            udev_device_unref(device)
        }
    }
}
