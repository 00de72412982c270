import Logging
import NIOCore
import NIOEmbedded
import SerialTransport
import WorkoutEngine

/// A transcript replayed in this process through the daemon's own device pipeline.
///
/// The pipeline (``DevicePipeline``: framing, decoding, dispatch, the session, encoding) runs on an
/// `NIOAsyncTestingChannel`, over an engine with the in-memory store. Each ``send(_:)`` is one inbound read, as a pty
/// read would deliver it.
public final class InProcessTranscriptTarget: TranscriptTarget {
    public let name = "in process"
    /// How long ``nextReply()`` waits for a reply the session is still computing.
    public static let replyTimeout: Duration = .seconds(5)
    /// A line no transcript sends, answered with an error and no change of state.
    ///
    /// Once its reply is out, every reply before it is too (replies keep the order of the lines).
    static let barrierID = "transcript-target-barrier"

    private let channel = NIOAsyncTestingChannel()
    private var pending: [UInt8] = []
    private var lastByteSent: UInt8?

    public init(options: PipelineOptions = PipelineOptions()) async throws {
        let engine = try await WorkoutEngine(store: InMemoryWorkoutStore())
        let session = engine.session(for: "transcript")
        let channel = channel
        let logger = Logger(label: "workoutd.transcript")
        try await channel.eventLoop.submit {
            try DevicePipeline.addHandlers(to: channel.pipeline.syncOperations, options: options, logger: logger) {
                lines in
                await session.handle(lines)
            }
        }.get()
    }

    public func send(_ bytes: [UInt8]) async throws {
        try await channel.writeInbound(ByteBuffer(bytes: bytes))
        lastByteSent = bytes.last ?? lastByteSent
    }

    public func nextReply() async throws -> String {
        let deadline = ContinuousClock.now + Self.replyTimeout
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            // The session's task and its reply run as jobs of the test loop, which runs what is due when told to.
            await channel.testingEventLoop.run()
            if var buffer = try await channel.readOutbound(as: ByteBuffer.self) {
                pending += buffer.readBytes(length: buffer.readableBytes) ?? []
            } else if ContinuousClock.now < deadline {
                // The batch runs as a task on the engine; its replies are written when it is done.
                try await Task.sleep(for: .milliseconds(1))
            } else {
                throw TestingError("no reply within \(Self.replyTimeout)")
            }
        }
    }

    public func finish() async throws -> [String] {
        var extra: [String] = []
        // A stream that stops mid-line has nothing after it to order against; otherwise the barrier's reply marks
        // the point by which any unexpected reply would have been written.
        if lastByteSent == nil || lastByteSent == UInt8(ascii: "\n") || lastByteSent == UInt8(ascii: "\r") {
            try await send(
                Array(#"{"id":"\#(Self.barrierID)","command_type":"transcript_barrier"}"#.utf8) + [UInt8(ascii: "\n")]
            )
            while true {
                let line = try await nextReply()
                if line.contains(#""id":"\#(Self.barrierID)""#) { break }
                extra.append(line)
            }
        }
        _ = try await channel.finish(acceptAlreadyClosed: true)
        while var buffer = try await channel.readOutbound(as: ByteBuffer.self) {
            pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        }
        extra += pending.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        return extra
    }
}
