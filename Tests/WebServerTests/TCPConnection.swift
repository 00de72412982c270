import Foundation
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection from a chosen source address, for what an HTTP client library will not do.
///
/// Hold a connection open sending nothing, trickle a request, send any `Host`, drop a stream without reading it.
final class TCPConnection: @unchecked Sendable {
    private(set) var fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host:port` (an IPv4 or IPv6 literal).
    ///
    /// From `source`, an address of this machine, when given.
    init(to host: String, port: Int, from source: String? = nil) throws {
        let v6 = host.contains(":")
        fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestingError("socket: \(String(cString: strerror(errno)))") }
        do {
            if let source { try Self.withAddress(source, port: 0) { try check(bind(fd, $0, $1), "bind \(source)") } }
            try Self.withAddress(host, port: port) { try check(connect(fd, $0, $1), "connect \(host):\(port)") }
        } catch {
            Glibc.close(fd)
            fd = -1
            throw error
        }
    }

    private func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else { throw TestingError("\(what): \(String(cString: strerror(errno)))") }
    }

    private static func withAddress(
        _ text: String,
        port: Int,
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Void
    ) throws {
        if text.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, text, &address.sin6_addr) == 1 else { throw TestingError("bad address \(text)") }
            try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else { throw TestingError("bad address \(text)") }
            try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestingError("send: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    /// `GET path` with `Host: host` and `headers`, kept alive.
    func get(_ path: String, host: String, headers: [String] = []) throws {
        try send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
    }

    /// Whether bytes arrive (or the peer closes) within `timeout`.
    private func wait(_ timeout: Duration) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout / .milliseconds(1))
        return poll(&descriptor, 1, milliseconds) > 0
    }

    /// Reads what arrives within `timeout` into the buffer.
    ///
    /// False when the peer closed (or reset) the connection.
    @discardableResult
    private func fill(_ timeout: Duration) throws -> Bool {
        guard wait(timeout) else { throw TestingError("nothing arrived within \(timeout)") }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { return false }
        buffer += chunk[..<n]
        return true
    }

    /// Reads until the buffer holds `marker`; returns the text up to and including it.
    func read(until marker: String, timeout: Duration = .seconds(10)) throws -> String {
        let deadline = ContinuousClock.now + timeout
        let needle = Array(marker.utf8)
        while true {
            if let range = buffer.firstRange(of: needle) {
                let text = String(decoding: buffer[..<range.upperBound], as: UTF8.self)
                buffer.removeFirst(range.upperBound)
                return text
            }
            let left = deadline - .now
            guard left > .zero, try fill(left) else {
                throw TestingError("'\(marker)' did not arrive; got \(String(decoding: buffer, as: UTF8.self))")
            }
        }
    }

    /// The status code of the response head that arrives next.
    func status(timeout: Duration = .seconds(10)) throws -> Int {
        let head = try read(until: "\r\n\r\n", timeout: timeout)
        let fields = head.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, let code = Int(fields[1]) else { throw TestingError("no status line in \(head)") }
        return code
    }

    /// Whether the peer closes the connection within `timeout`.
    ///
    /// What it sends meanwhile is read and dropped.
    func closedByPeer(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard wait(deadline - .now) else { return false }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return true }
        }
        return false
    }

    /// Whether the chunked response being read ends within `timeout`.
    ///
    /// It ends when its last chunk arrives or the peer closes.
    func responseEnded(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let last = Array("\r\n0\r\n\r\n".utf8)
        while ContinuousClock.now < deadline {
            if buffer.firstRange(of: last) != nil { return true }
            guard wait(deadline - .now) else { return false }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return true }
            buffer += chunk[..<n]
        }
        return buffer.firstRange(of: last) != nil
    }

    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    deinit { close() }
}
