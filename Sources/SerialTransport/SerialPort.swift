import CPosixTTY

#if canImport(Glibc)
import Glibc
#endif

/// Why a serial device could not be opened; `isTransient` errors are worth retrying.
public struct SerialPortError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var operation: String
    public var errno: Int32
    /// Who holds the tty's flock, when that is why it was not opened and `/proc/locks` names them.
    public var holder: Int32?

    public init(path: String, operation: String, errno: Int32, holder: Int32? = nil) {
        self.path = path
        self.operation = operation
        self.errno = errno
        self.holder = holder
    }

    /// Whether another program holds the tty (its flock).
    public var isHeldByAnotherProgram: Bool { operation == Self.lockOperation && errno == EWOULDBLOCK }

    /// Why the node is not served, in a few words for `workoutctl devices`.
    public var summary: String {
        if isHeldByAnotherProgram { return "held by another program" + (holder.map { " (pid \($0))" } ?? "") }
        if errno == EACCES {
            let group = OpenFailurePolicy.wearableGroup
            return "permission denied; the daemon's user needs group \(group) "
                + "(usermod -aG \(group) \(OpenFailurePolicy.daemonUser), and the udev rule)"
        }
        return "\(operation) failed: \(String(cString: strerror(errno)))"
    }

    /// The node is missing, not yet permitted, or held by someone else.
    ///
    /// udev may still be settling, or the device is about to come back.
    public var isTransient: Bool {
        [ENOENT, EACCES, EBUSY, EIO, ENXIO, ENODEV, EAGAIN, EPERM].contains(errno)
    }

    public var description: String {
        if isHeldByAnotherProgram {
            let who = holder.map { "another program (pid \($0))" } ?? "another program"
            return "\(path) is in use by \(who), which holds the tty's flock; waiting until it is released"
        }
        return "\(operation) \(path): \(String(cString: strerror(errno)))"
    }

    static let lockOperation = "lock"
}

/// Opens and configures serial devices: raw mode, fixed baud, exclusive where supported.
public enum SerialPort {
    /// Opens `path` non-blocking and without becoming its controlling terminal, and configures it.
    /// The caller owns the returned descriptor.
    public static func open(path: String, baud: UInt32) throws(SerialPortError) -> CInt {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SerialPortError(path: path, operation: "open", errno: errno) }
        // The lock serial programs agree on (picocom, minicom, another workoutd): root defeats TIOCEXCL,
        // so a held tty is left alone, before its settings are touched, and retried like a missing one.
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var error = SerialPortError(path: path, operation: SerialPortError.lockOperation, errno: errno)
            if error.isHeldByAnotherProgram { error.holder = FlockHolder.pid(holding: fd) }
            close(fd)
            throw error
        }
        if wd_configure_raw(fd, baud) != 0 {
            let error = SerialPortError(path: path, operation: "configure", errno: errno)
            close(fd)
            throw error
        }
        // Keeps a second program (a stray `cat`, ModemManager) from reading our lines. Some drivers
        // and older pty implementations refuse it; serving the device matters more.
        _ = wd_set_exclusive(fd)
        return fd
    }

    /// Bytes the device has sent that nobody has read yet, or -1 when the descriptor cannot say.
    public static func unreadBytes(_ descriptor: CInt) -> Int {
        Int(wd_bytes_available(descriptor))
    }

    /// Whether `baud` is a rate ``open(path:baud:)`` can set.
    public static func isSupported(baud: UInt32) -> Bool {
        [9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1_000_000, 2_000_000, 3_000_000, 4_000_000]
            .contains(baud)
    }
}
