import Foundation
import StrictJSON
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A wearable on the far end of a serial line: writes command lines and reads reply lines.
///
/// Works on any descriptor (a pty master, the test end of a socat pair, a umockdev tty). I/O is
/// blocking with timeouts, which keeps tests linear and readable.
public final class SimulatedWearable: @unchecked Sendable {
    public let fd: CInt
    private var buffer: [UInt8] = []
    private let ownsDescriptor: Bool
    private let pty: PseudoTerminal?

    /// A wearable on a new pty; serve ``devicePath`` from the daemon.
    public convenience init() throws(TestingError) {
        let pty = try PseudoTerminal()
        self.init(pty: pty)
    }

    private init(pty: PseudoTerminal) {
        self.pty = pty
        self.fd = pty.masterFD
        self.ownsDescriptor = false
    }

    /// A wearable on an existing descriptor (closed on ``unplug()`` if `owns`).
    public init(fd: CInt, owns: Bool = true) {
        self.fd = fd
        self.ownsDescriptor = owns
        self.pty = nil
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// Opens a path as the wearable's end (e.g. socat's second link).
    public convenience init(path: String) throws(TestingError) {
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw TestingError("open \(path): \(String(cString: strerror(errno)))") }
        self.init(fd: fd)
    }

    /// The device node the daemon should open, when the wearable sits on a pty made for it.
    public var devicePath: String { pty?.devicePath ?? "" }

    /// Sends one command line (a newline is added when missing).
    public func send(_ line: String) throws(TestingError) {
        try write(Array((line.hasSuffix("\n") ? line : line + "\n").utf8))
    }

    /// Encodes and sends a command with an optional id.
    public func send(_ command: Command, id: CommandID? = nil) throws(TestingError) {
        try send(Self.line(for: command, id: id))
    }

    /// Writes raw bytes, waiting while the line is full.
    public func write(_ bytes: [UInt8], timeout: Duration = .seconds(30)) throws(TestingError) {
        var offset = 0
        let deadline = ContinuousClock.now + timeout
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                guard ContinuousClock.now < deadline else {
                    throw TestingError("write timed out after \(offset) bytes")
                }
                try waitFor(POLLOUT, until: deadline)
            } else {
                throw TestingError("write failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The next reply line, without its newline.
    public func readLine(timeout: Duration = .seconds(30)) throws(TestingError) -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            try fill(until: deadline)
        }
    }

    /// The next `count` reply lines.
    public func readLines(_ count: Int, timeout: Duration = .seconds(30)) throws(TestingError) -> [String] {
        let deadline = ContinuousClock.now + timeout
        var lines: [String] = []
        while lines.count < count {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw TestingError("got \(lines.count) of \(count) replies: \(lines)") }
            lines.append(try readLine(timeout: remaining))
        }
        return lines
    }

    /// The next reply, decoded.
    public func readReply(timeout: Duration = .seconds(30)) throws(TestingError) -> Reply {
        let line = try readLine(timeout: timeout)
        do {
            return try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
        } catch {
            throw TestingError("reply is not a valid Reply: \(line) (\(error))")
        }
    }

    /// Sends a line and returns the reply line.
    public func request(_ line: String, timeout: Duration = .seconds(30)) throws(TestingError) -> String {
        try send(line)
        return try readLine(timeout: timeout)
    }

    /// Asserts nothing arrives for `duration` (e.g. after a blank line); returns what did arrive.
    public func drain(for duration: Duration) -> [UInt8] {
        let deadline = ContinuousClock.now + duration
        while (try? fill(until: deadline)) != nil {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Pulls the plug: closes the wearable's end.
    public func unplug() {
        if let pty {
            pty.close()
        } else if ownsDescriptor {
            close(fd)
        }
    }

    /// A command as the wearable would send it: compact JSON with `id` beside `command_type`.
    public static func line(for command: Command, id: CommandID? = nil) -> String {
        let encoder = JSONEncoder.compactSorted(iso8601Dates: false)
        guard var object = (try? JSONSerialization.jsonObject(with: encoder.encode(command))) as? [String: Any] else {
            return "{}"
        }
        switch id {
        case .string(let value): object["id"] = value
        case .integer(let value): object["id"] = value
        case nil: break
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func fill(until deadline: ContinuousClock.Instant) throws(TestingError) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                buffer.append(contentsOf: chunk[..<n])
                return
            }
            if n == 0 { throw TestingError("end of file on the wearable's line") }
            // EIO on a pty master means no one has the device open yet (or any more): wait for the daemon.
            guard errno == EAGAIN || errno == EINTR || (pty != nil && errno == EIO) else {
                throw TestingError("read failed: \(String(cString: strerror(errno)))")
            }
            try waitFor(POLLIN, until: deadline)
        }
    }

    private func waitFor(_ events: Int32, until deadline: ContinuousClock.Instant) throws(TestingError) {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw TestingError("timed out waiting for the device") }
        var pfd = pollfd(fd: fd, events: Int16(events), revents: 0)
        let ms = Int32(min(remaining.inMilliseconds + 1, 60_000))
        let r = poll(&pfd, 1, ms)
        if r == 0 { throw TestingError("timed out waiting for the device") }
        if r < 0 && errno != EINTR { throw TestingError("poll failed: \(String(cString: strerror(errno)))") }
        // POLLHUP on a pty master just means the daemon has not opened (or has closed) its end yet.
        if pfd.revents & Int16(POLLHUP) != 0 && pfd.revents & Int16(events) == 0 {
            usleep(5_000)
        }
    }
}
