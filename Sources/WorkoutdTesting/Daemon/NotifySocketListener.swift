import Foundation
import Glibc
import WorkoutProtocol

/// The service manager's end of `NOTIFY_SOCKET`.
///
/// A real AF_UNIX datagram socket that collects what sd_notify(3) sends, one datagram per call. Waiting happens on a
/// Dispatch thread, never on the cooperative pool that the services under test need.
public final class NotifySocketListener: Sendable {
    public let path: String
    private let descriptor: CInt

    public init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        descriptor = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The next datagram, or nil when none arrives within `timeout`.
    public func next(timeout: Duration) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.receive(timeout: timeout)) }
        }
    }

    /// Every datagram that arrives within `window`.
    public func all(during window: Duration) async -> [String] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.receiveAll(during: window)) }
        }
    }

    /// The next datagram, or nil when none arrives within `timeout`; blocks the calling thread.
    public func receive(timeout: Duration) -> String? {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.inMilliseconds)
        guard poll(&entry, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    private func receiveAll(during window: Duration) -> [String] {
        let deadline = ContinuousClock.now + window
        var messages: [String] = []
        while case let remaining = deadline - ContinuousClock.now, remaining > .zero {
            if let message = receive(timeout: remaining) { messages.append(message) }
        }
        return messages
    }
}
