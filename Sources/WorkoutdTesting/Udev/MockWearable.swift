import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
import WorkoutProtocol
#endif

/// The wearable's side of a mock tty: writes command lines into the pty and reads reply lines out.
///
/// Waiting for a reply blocks a Dispatch worker thread, never Swift's cooperative pool (the daemon's
/// sessions run there; blocking it could starve the very code under test).
public final class MockWearable: Sendable {
    public let tty: MockTTY
    private let received = Mutex<[UInt8]>([])

    public init(tty: MockTTY) {
        self.tty = tty
    }

    /// Writes `line` plus LF. Returns false if the pty would not take it all.
    @discardableResult
    public func send(_ line: String) -> Bool {
        write(Array((line + "\n").utf8))
    }

    /// Writes raw bytes (a partial line, several lines at once).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(tty.controller, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// The next reply line (without its LF), or `nil` if none arrived within `timeout`.
    public func readLine(timeout: Duration) async -> String? {
        await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: self.readLineBlocking(timeout: timeout)) }
        }
    }

    /// As ``readLine(timeout:)``, blocking the calling thread (for benchmark driver threads).
    public func readLineBlocking(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = takeLine() { return line }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            var descriptor = pollfd(fd: tty.controller, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: remaining.inMilliseconds + 1)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno != EINTR { return nil }
            // POLLHUP alone means nobody has the node open (yet): keep waiting until the deadline.
            guard ready > 0, descriptor.revents & Int16(POLLIN) != 0 else {
                if ready > 0 { usleep(1000) }
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(tty.controller, $0.baseAddress, $0.count) }
            if count > 0 {
                received.withLock { $0.append(contentsOf: buffer[0..<count]) }
            } else if count < 0 && errno != EINTR && errno != EAGAIN && errno != EIO {
                return nil
            }
        }
    }

    /// Whether someone (the daemon) has the device node open.
    ///
    /// A pty's controlling end reports `POLLHUP` while no process holds the other end.
    public var isNodeOpen: Bool {
        var descriptor = pollfd(fd: tty.controller, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 0)
        return descriptor.revents & Int16(POLLHUP) == 0
    }

    /// Bytes that arrived but were not yet returned as lines; drained (e.g. before a replug).
    public func discardPending() {
        received.withLock { $0.removeAll() }
    }

    private func takeLine() -> String? {
        received.withLock { bytes in
            guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            let line = String(decoding: bytes[..<newline], as: UTF8.self)
            bytes.removeSubrange(...newline)
            return line
        }
    }
}
