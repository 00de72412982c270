import Foundation
import NIOCore
import NIOEmbedded
import SerialTransport
import WorkoutEngine
import WorkoutProtocol

/// One device's whole path from bytes to reply lines, run synchronously in memory.
///
/// The daemon's own framing and decoding handlers run in an `EmbeddedChannel`; the decoded lines of
/// each read go, as one batch, to a ``SessionMachine`` over an in-memory snapshot (what
/// `DeviceSession` does around a store commit that always succeeds). No threads, no clock, no I/O:
/// the same bytes always give the same replies, which is what fuzzing and property tests need.
public final class InMemoryDevice {
    /// The daemon's default line limit, so harnesses exercise the rule users get.
    public static let defaultMaximumLineLength = PipelineOptions().maximumLineLength
    /// The fixed daemon clock: durations are 0 and replies repeat byte for byte.
    public static let fixedNow = Date(timeIntervalSince1970: 1_600_000_000)

    public let maximumLineLength: Int
    private let channel = EmbeddedChannel()
    private var machine: SessionMachine
    private let ids = IDAllocator()
    private let clock: @Sendable () -> Date
    private let encoder = ReplyEncoder()

    public init(
        maximumLineLength: Int = InMemoryDevice.defaultMaximumLineLength,
        identity: DeviceIdentity = "in-memory",
        clock: @escaping @Sendable () -> Date = { InMemoryDevice.fixedNow }
    ) throws {
        self.maximumLineLength = maximumLineLength
        self.clock = clock
        machine = SessionMachine(identity: identity)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(LineDecodingHandler(limit: LineLengthLimit(maximumLineLength)))
    }

    /// The session's snapshot after everything received so far.
    public var snapshot: DeviceSnapshot { machine.snapshot }

    /// Delivers one read's worth of bytes; returns the reply lines (each ending in LF) in order.
    public func receive(_ bytes: some Collection<UInt8>) throws -> [[UInt8]] {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try channel.writeInbound(buffer)
        return try runDecodedLines()
    }

    /// The device goes away: a partial line left in the framer is dropped, as the daemon does.
    public func disconnect() throws -> [[UInt8]] {
        _ = try channel.finish(acceptAlreadyClosed: true)
        return try runDecodedLines()
    }

    /// Sends `stream` cut into reads at `cuts`, then disconnects; returns every reply line.
    ///
    /// `cuts` are offsets into the stream, in any order; duplicates and out-of-range values are ignored.
    public func receive(_ stream: [UInt8], cutAt cuts: some Sequence<Int>) throws -> [[UInt8]] {
        let boundaries = Set(cuts.filter { $0 > 0 && $0 < stream.count }).sorted()
        var replies: [[UInt8]] = []
        var start = 0
        for end in boundaries + [stream.count] {
            replies += try receive(stream[start..<end])
            start = end
        }
        return replies + (try disconnect())
    }

    private func runDecodedLines() throws -> [[UInt8]] {
        var lines: [DecodedLine] = []
        while let read = try channel.readInbound(as: [DecodedLine].self) {
            lines += read
        }
        guard !lines.isEmpty else { return [] }
        let step = machine.run(lines, ids: ids, now: clock)
        return step.replies.map(encoder.encodeLine)
    }
}
