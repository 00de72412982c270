import ControlProtocol
import Foundation
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A blocking client connection to workoutd's control socket.
///
/// Write request lines, read reply and event lines.
///
/// Blocking I/O keeps a command-line tool and tests linear; one connection per thread.
public final class ControlConnection: @unchecked Sendable {
    public let path: String
    private var fd: CInt
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 1
    private let encoder = ControlSocket.makeEncoder()
    private let decoder = ControlSocket.makeDecoder()

    /// Connects to `path`.
    ///
    /// Throws ``ControlConnectionError/notRunning(path:reason:)`` when no daemon answers there.
    public init(path: String) throws(ControlConnectionError) {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .failed("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw .failed("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENOENT: throw .notRunning(path: path, reason: "no socket at \(path)")
            case ECONNREFUSED: throw .notRunning(path: path, reason: "nothing listening on \(path)")
            case EACCES, EPERM:
                throw .failed(
                    "permission denied on \(path); run as root or as a member of group workoutd (usermod -aG workoutd $USER)"
                )
            default: throw .failed("cannot connect to \(path): \(String(cString: strerror(code)))")
            }
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Sends `call` and returns its decoded reply; event lines that arrive first are skipped.
    public func request<Value: Codable & Sendable>(
        _ call: ControlCall,
        as type: Value.Type = Value.self
    ) throws(ControlConnectionError) -> ControlResponse<Value> {
        let id = ControlRequestID.integer(nextID)
        nextID += 1
        let line: [UInt8]
        do {
            line = try ControlSocket.line(ControlRequest(id: id, call: call), encoder: encoder)
        } catch {
            throw .failed("cannot encode the request: \(error)")
        }
        try write(line)
        while true {
            guard let reply = try readLine() else { throw .failed("workoutd closed the connection") }
            if let response = try? decoder.decode(ControlResponse<Value>.self, from: Data(reply)),
                response.id == id || response.id == nil
            {
                return response
            }
        }
    }

    /// Sends `call` and returns its result, or throws the daemon's error.
    public func call<Value: Codable & Sendable>(
        _ call: ControlCall,
        as type: Value.Type = Value.self
    ) throws(ControlConnectionError) -> Value {
        switch try request(call, as: type).outcome {
        case .success(let value): return value
        case .failure(let error): throw .rejected(error)
        }
    }

    /// Reads the next event of a subscription; `nil` when the daemon closed the connection.
    public func nextEvent(timeout: Duration? = nil) throws(ControlConnectionError) -> ControlEvent? {
        while let line = try readLine(timeout: timeout) {
            if let event = try? decoder.decode(ControlEventLine.self, from: Data(line)) { return event.event }
        }
        return nil
    }

    /// Writes raw bytes (a request line, or anything else a test wants to send).
    public func write(_ bytes: [UInt8]) throws(ControlConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw .failed("write to \(path) failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The next line without its newline; `nil` at end of stream. Throws when `timeout` passes first.
    public func readLine(timeout: Duration? = nil) throws(ControlConnectionError) -> [UInt8]? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            if let deadline {
                let remaining = deadline - ContinuousClock.now
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let milliseconds = max(0, remaining.inMilliseconds)
                let ready = poll(&pfd, 1, Int32(min(milliseconds, 600_000)))
                if ready == 0 { throw .timedOut }
                if ready < 0 && errno != EINTR { throw .failed("poll failed: \(String(cString: strerror(errno)))") }
                if ready < 0 { continue }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                buffer.append(contentsOf: chunk[..<n])
            } else if n == 0 || errno == ECONNRESET {
                return nil
            } else if errno != EINTR {
                throw .failed("read from \(path) failed: \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// Why a control request did not produce a result.
public enum ControlConnectionError: Error, Sendable, CustomStringConvertible {
    /// Nothing answers on the socket: the daemon is stopped (or uses another socket).
    case notRunning(path: String, reason: String)
    /// The daemon answered with an error.
    case rejected(ControlError)
    case timedOut
    case failed(String)

    public var description: String {
        switch self {
        case .notRunning(_, let reason): "workoutd is not running (\(reason))"
        case .rejected(let error): "workoutd refused the request: \(error.message) (\(error.code.rawValue))"
        case .timedOut: "timed out waiting for workoutd"
        case .failed(let reason): reason
        }
    }
}
