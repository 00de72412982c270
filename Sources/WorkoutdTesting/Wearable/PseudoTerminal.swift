import CPosixTTY

#if canImport(Glibc)
import Glibc
#endif

/// A freshly allocated pseudo-terminal.
///
/// The test keeps the master, the code under test opens `devicePath`.
///
/// The line discipline is put in raw mode at once, so bytes written before the daemon opens the
/// device are neither echoed back nor rewritten (CR→LF).
public final class PseudoTerminal: @unchecked Sendable {
    /// The slave side, e.g. `/dev/pts/7`: what a daemon is told to serve.
    public let devicePath: String
    /// The master side, held by the test (the "wearable").
    public private(set) var masterFD: CInt

    public init() throws(TestingError) {
        var name = [CChar](repeating: 0, count: 128)
        let fd = wd_openpty(&name, name.count, 1)
        guard fd >= 0 else { throw TestingError("posix_openpt failed: \(String(cString: strerror(errno)))") }
        masterFD = fd
        devicePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // The slave must be opened once to configure the line discipline; keeping it open until the
        // daemon takes over also keeps reads on the master from failing with EIO.
        let slave = open(devicePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        if slave >= 0 {
            _ = wd_configure_raw(slave, 115_200)
            Glibc.close(slave)
        }
    }

    /// Closes the master: to the daemon this is the wearable being unplugged (its reads fail with EIO).
    public func close() {
        if masterFD >= 0 {
            Glibc.close(masterFD)
            masterFD = -1
        }
    }

    deinit { close() }
}

/// A failure in the test harness itself, with a sentence saying what went wrong.
public struct TestingError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
