import Foundation
import Synchronization
import WorkoutProtocol
import WorkoutdTesting

/// Pipelined throughput: every command written as fast as the line takes it.
///
/// A second thread reads the replies, so neither direction waits for the other (a single thread could deadlock with
/// both pty buffers full).
enum PipelinedThroughput {
    struct Result {
        var commands: Int
        var commandBytes: Int
        var replyBytes: Int
        var elapsed: Duration
        /// The replies as they arrived, for checking after the clock has stopped.
        var replies: [UInt8]

        var seconds: Double { elapsed.inSeconds }
        var commandsPerSecond: Double { Double(commands) / seconds }
        var megabytesPerSecondIn: Double { Double(commandBytes) / seconds / 1e6 }
        var megabytesPerSecondOut: Double { Double(replyBytes) / seconds / 1e6 }
    }

    /// Room per reply; a real reply is under 130 bytes.
    private static let replyCapacity = 512

    static func measure(
        _ master: MasterSide,
        commands: [CommandMix.Entry],
        timeout: Duration = .seconds(300)
    ) throws -> Result {
        let payload = commands.flatMap(\.line)
        let expected = commands.count
        let deadline = ContinuousClock.now + timeout
        let collector = ReplyCollector(capacity: expected * replyCapacity)
        let start = ContinuousClock.now
        let reader = Thread { collector.collect(from: master, lines: expected, until: deadline) }
        reader.start()
        var writeError: (any Error)?
        do {
            var offset = 0
            try payload.withUnsafeBytes { bytes in
                while offset < bytes.count {
                    offset += try master.writeSome(UnsafeRawBufferPointer(rebasing: bytes[offset...]), until: deadline)
                }
            }
        } catch {
            writeError = error
        }
        let (replies, finished, readError) = collector.wait()
        if let writeError { throw writeError }
        if let readError { throw readError }
        return Result(
            commands: expected,
            commandBytes: payload.count,
            replyBytes: replies.count,
            elapsed: finished - start,
            replies: replies
        )
    }
}

/// The reader thread's side: reads until `lines` newlines have arrived, noting when the last did.
private final class ReplyCollector: @unchecked Sendable {
    private let buffer: UnsafeMutableRawBufferPointer
    private var length = 0
    private var finished = ContinuousClock.now
    private var error: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    init(capacity: Int) {
        buffer = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit { buffer.deallocate() }

    func collect(from master: MasterSide, lines: Int, until deadline: ContinuousClock.Instant) {
        defer { done.signal() }
        var seen = 0
        do {
            while seen < lines {
                guard length < buffer.count else {
                    throw TestingError("replies overflowed \(buffer.count) bytes after \(seen) lines")
                }
                let n = try master.readSome(
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[length...]),
                    until: deadline
                )
                seen += countNewlines(UnsafeRawBufferPointer(rebasing: buffer[length..<length + n]))
                length += n
            }
            finished = ContinuousClock.now
        } catch {
            self.error = TestingError("after \(seen) of \(lines) replies: \(error)")
        }
    }

    /// Blocks until the reader thread is done; the semaphore orders its writes before these reads.
    func wait() -> (replies: [UInt8], finished: ContinuousClock.Instant, error: (any Error)?) {
        done.wait()
        return (Array(UnsafeRawBufferPointer(rebasing: buffer[..<length])), finished, error)
    }
}
