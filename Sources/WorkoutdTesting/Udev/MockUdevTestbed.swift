import CPosixTTY
import CUmockdev

#if canImport(Glibc)
import Glibc
#endif

/// A umockdev testbed: a private sysfs and `/dev` that libudev and `open(2)` see instead of the real.
///
/// They live in a temporary directory, and are seen only in a process started under `umockdev-wrapper`, which preloads
/// `libumockdev-preload.so`.
///
/// umockdev keeps its testbed in the process environment (`UMOCKDEV_DIR`), so there is one at a time:
/// create it, use it, and let it go before creating the next (tests using it run serialized).
public final class MockUdevTestbed: @unchecked Sendable {
    // @unchecked: the GObject is used from one test at a time; umockdev's own state is a directory.
    private let testbed: UnsafeMutablePointer<UMockdevTestbed>
    private var nextMinor = 0
    private var deferredNodes: [String: DeferredNode] = [:]

    /// Whether this process runs under `umockdev-wrapper`; without it libudev sees the real system.
    public static var isPreloaded: Bool {
        guard let preload = getenv("LD_PRELOAD") else { return false }
        return String(cString: preload).contains("libumockdev-preload")
    }

    public init() {
        testbed = umockdev_testbed_new()
    }

    deinit {
        // Removes the temporary directory and closes the ptys' controlling ends.
        g_object_unref(UnsafeMutableRawPointer(testbed))
        for node in deferredNodes.values { close(node.controller) }
    }

    /// The directory that stands in for `/`: `/dev/ttyACM0` is `rootDirectory + "/dev/ttyACM0"`.
    public var rootDirectory: String {
        guard let root = umockdev_testbed_get_root_dir(testbed) else { return "" }
        defer { g_free(root) }
        return String(cString: root)
    }

    /// Plugs in a USB serial tty `/dev/<name>` with the given udev properties, backed by a pty.
    ///
    /// The returned ``MockTTY`` holds the pty's other end. umockdev announces `add` itself, as udevd would after its
    /// rules ran — and, as on a real system, just before the node exists. With `nodeReady: false` the node stays
    /// missing (`ENOENT`) until ``makeNodeAvailable(_:)``.
    public func plugTTY(
        name: String,
        usbPort: String,
        properties: [String: String],
        nodeReady: Bool = true
    ) throws(MockTestbedError) -> MockTTY {
        let syspath = "/devices/pci0000:00/0000:00:14.0/usb1/\(usbPort)/\(usbPort):1.0/tty/\(name)"
        var description = "P: \(syspath)\n\(nodeReady ? "N: \(name)\n" : "")E: DEVNAME=/dev/\(name)\nE: SUBSYSTEM=tty\n"
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            description += "E: \(key)=\(value)\n"
        }
        nextMinor += 1
        description += "A: dev=166:\(nextMinor)\n"

        // The pty for a node that comes later is ours; make it before the device exists.
        let deferred = nodeReady ? nil : try DeferredNode()
        var error: UnsafeMutablePointer<GError>?
        guard umockdev_testbed_add_from_string(testbed, description, &error) != 0 else {
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown error"
            if let error { g_error_free(error) }
            throw MockTestbedError(message: "adding \(name): \(message)")
        }
        let devnode = "/dev/\(name)"
        if let deferred {
            deferredNodes[devnode] = deferred
            return MockTTY(syspath: "/sys" + syspath, devnode: devnode, controller: deferred.controller)
        }
        let controller = umockdev_testbed_get_dev_fd(testbed, devnode)
        guard controller >= 0 else { throw MockTestbedError(message: "\(devnode) has no pty behind it") }
        return MockTTY(syspath: "/sys" + syspath, devnode: devnode, controller: controller)
    }

    /// Sends a uevent (`add`, `change`, `remove`) for the device, as udevd does.
    public func announce(_ tty: MockTTY, action: String) {
        umockdev_testbed_uevent(testbed, tty.syspath, action)
    }

    /// Unplugs the device: announces `remove`, then deletes its sysfs directory and `/dev` node.
    ///
    /// `remove` goes first because umockdev reads the properties from sysfs.
    public func unplug(_ tty: MockTTY) {
        announce(tty, action: "remove")
        umockdev_testbed_remove_device(testbed, tty.syspath)
    }

    /// Creates the node of a tty plugged with `nodeReady: false`, as udev finishing its rules would.
    public func makeNodeAvailable(_ tty: MockTTY) throws(MockTestbedError) {
        guard let deferred = deferredNodes[tty.devnode] else {
            throw MockTestbedError(message: "\(tty.devnode) was not plugged with nodeReady: false")
        }
        let node = rootDirectory + tty.devnode
        guard symlink(deferred.ptyPath, node) == 0 else {
            throw MockTestbedError(message: "creating \(node): \(String(cString: strerror(errno)))")
        }
    }
}

/// A pty made by the test for a node that appears late (umockdev makes the others).
private struct DeferredNode {
    let controller: CInt
    let ptyPath: String

    init() throws(MockTestbedError) {
        var name = [CChar](repeating: 0, count: 128)
        let controller = wd_openpty(&name, name.count, 0)
        guard controller >= 0 else { throw MockTestbedError(message: "openpty: \(String(cString: strerror(errno)))") }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // As umockdev does for its ptys: no echo or line editing before the daemon configures the tty,
        // and the far end opened and closed once, so the controller reports POLLHUP until the daemon opens it.
        var settings = termios()
        tcgetattr(controller, &settings)
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
        settings.c_iflag &= ~tcflag_t(IGNCR | INLCR | ICRNL)
        settings.c_oflag &= ~tcflag_t(ONLCR | OCRNL)
        tcsetattr(controller, TCSANOW, &settings)
        let far = open(path, O_RDWR | O_NOCTTY)
        if far >= 0 { close(far) }
        self.controller = controller
        self.ptyPath = path
    }
}

/// A tty in the testbed: where it lives, and the controlling end of the pty behind its node.
public struct MockTTY: Sendable, Hashable {
    public var syspath: String
    public var devnode: String
    /// The pty master: what the "wearable" reads and writes. Owned by the testbed; never close it.
    public var controller: CInt
}

/// umockdev refused to build the requested device.
public struct MockTestbedError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
