import Foundation
import NIOCore
import SerialTransport
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// One conformance session on an open serial port.
///
/// It reads the wearable's lines, writes the hub's answers at their due times, and feeds both to the grader until
/// the wearable closes the port, goes quiet or the time is up.
struct ConformanceSession {
    /// With no reply left to write, this long without a line ends the session: the wearable has finished.
    static let quietTime = Duration.seconds(5)

    /// The port could not be read or written for a reason other than the wearable going away.
    struct PortError: Error, CustomStringConvertible {
        var operation: String
        var errno: Int32
        var description: String { "\(operation): \(String(cString: strerror(errno)))" }
    }

    let descriptor: CInt
    let device: String
    let limit: Duration
    let maximumLineLength: Int
    /// Each line and reply as it passes, for the person watching.
    let trace: (String) -> Void

    func run() throws(PortError) -> ConformanceReport {
        let clock = ContinuousClock()
        let start = clock.now
        var hub = ConformanceHub(maximumLineLength: maximumLineLength)
        var grader = ConformanceGrader(maximumLineLength: maximumLineLength)
        var framer = LineFrameDecoder(maximumLineLength: maximumLineLength)
        var buffer = ByteBufferAllocator().buffer(capacity: 4096)
        var queue: [ConformanceHub.Answer] = []
        var lastLine = Duration.zero
        var readBuffer = [UInt8](repeating: 0, count: 4096)
        var ending = ConformanceReport.Ending.timeLimit
        session: while true {
            var now = clock.now - start
            while let head = queue.first, head.due <= now {
                queue.removeFirst()
                guard try write(head.bytes) else {
                    ending = .closed
                    break session
                }
                now = clock.now - start
                grader.replyDelivered(head.delivered, at: now)
                trace(Self.traced(now, "<", head.bytes))
            }
            if now >= limit { break }
            if queue.isEmpty, grader.lines > 0, now - lastLine >= Self.quietTime {
                ending = .quiet
                break
            }
            var wake = limit
            if let head = queue.first { wake = min(wake, head.due) }
            if queue.isEmpty, grader.lines > 0 { wake = min(wake, lastLine + Self.quietTime) }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: max(0, (wake - now).inMilliseconds) + 1))
            if ready < 0 {
                if errno == EINTR { continue }
                throw PortError(operation: "poll", errno: errno)
            }
            guard ready > 0 else { continue }
            if poller.revents & Int16(POLLIN) == 0 {
                ending = .closed
                break
            }
            let count = readBuffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == EIO {
                    ending = .closed
                    break
                }
                throw PortError(operation: "read", errno: errno)
            }
            if count == 0 {
                ending = .closed
                break
            }
            let arrived = clock.now - start
            lastLine = arrived
            buffer.writeBytes(readBuffer[0..<count])
            var frames: [[UInt8]?] = []
            framing: while true {
                switch framer.step(&buffer) {
                case .frame(.line(let line, _)): frames.append(Array(line.readableBytesView))
                case .frame(.tooLong(_)): frames.append(nil)
                case .skipped: continue
                case .needMoreData: break framing
                }
            }
            buffer.discardReadBytes()
            // Every line of this read was on its way before any answer to them could reach the wearable.
            for frame in frames {
                grader.lineReceived(frame, at: arrived)
                trace(Self.traced(arrived, ">", frame ?? Array("(a line over the limit)".utf8)))
            }
            for frame in frames {
                let injectedBefore = hub.injected.count
                let answer = hub.answer(frame, at: arrived)
                for fault in hub.injected[injectedBefore...] {
                    trace("           fault: \(fault.fault.summary) (command \(fault.command), send \(fault.send))")
                }
                if let answer { queue.append(answer) }
            }
        }
        let injected = hub.injected
        return ConformanceReport(
            device: device,
            elapsed: clock.now - start,
            ending: ending,
            lines: grader.lines,
            commands: grader.commands,
            faults: hub.plan.planned.map { planned in
                ConformanceReport.Fault(
                    fault: planned.fault,
                    command: planned.command,
                    send: planned.send,
                    injected: injected.first { $0.command == planned.command && $0.send == planned.send }
                )
            },
            verdicts: grader.verdicts
        )
    }

    /// Writes all of `bytes`; false when the other end has gone.
    private func write(_ bytes: [UInt8]) throws(PortError) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 100)
            case EIO: return false
            default: throw PortError(operation: "write", errno: errno)
            }
        }
        return true
    }

    private static func traced(_ time: Duration, _ direction: String, _ bytes: [UInt8]) -> String {
        // The wearable's bytes are untrusted: escaped, so a control character shows instead of acting.
        let text = UntrustedText.escaped(String(decoding: bytes, as: UTF8.self))
        return String(format: "%9.3f ", time.inSeconds) + "\(direction) \(text)"
    }
}
