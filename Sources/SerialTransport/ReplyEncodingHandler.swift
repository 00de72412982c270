import NIOCore
import WorkoutProtocol

/// A batch's replies together with the lines they answer, in the same order.
///
/// Under ``ReplyLineEnding/auto`` the replies follow the lines' endings. The lines are the batch the dispatcher already
/// holds: no copy.
public struct ReplyBatch: Sendable {
    public var replies: [Reply]
    public var lines: [DecodedLine]
    /// Overrides the encoder's own setting: a reload's `serial.reply_line_ending` for an open connection.
    public var lineEnding: ReplyLineEnding?

    public init(replies: [Reply], answering lines: [DecodedLine] = [], lineEnding: ReplyLineEnding? = nil) {
        self.replies = replies
        self.lines = lines
        self.lineEnding = lineEnding
    }
}

/// Encodes a batch's replies as compact JSON lines, one buffer for the batch.
///
/// One write per batch rather than per reply: the per-write cost of the pipeline (a buffer, a pending
/// write, an iovec) was a noticeable part of what a command cost.
public struct ReplyLineEncoder: MessageToByteEncoder {
    public typealias OutboundIn = ReplyBatch

    private let encoder = ReplyEncoder()
    private let lineEnding: ReplyLineEnding
    /// The bytes of the batch being encoded, kept between batches so a reply costs no new array.
    private let scratch = Scratch()

    /// Used only on the channel's event loop, where the encoder runs.
    private final class Scratch {
        var bytes: [UInt8] = []
    }

    /// With `.auto`, each reply ends in CRLF when the line it answers ended in CR or CRLF, else in LF.
    public init(lineEnding: ReplyLineEnding = .lf) {
        self.lineEnding = lineEnding
    }

    public func encode(data: ReplyBatch, out: inout ByteBuffer) throws {
        scratch.bytes.removeAll(keepingCapacity: true)
        scratch.bytes.reserveCapacity(data.replies.count * 112)
        for index in data.replies.indices {
            encoder.appendLine(data.replies[index], to: &scratch.bytes)
            // The encoder ends the line in LF; a CR goes in before it.
            if endsInCRLF(replyAt: index, of: data) {
                scratch.bytes.insert(UInt8(ascii: "\r"), at: scratch.bytes.count - 1)
            }
        }
        out.writeBytes(scratch.bytes)
        // A pipelined burst's buffer is not kept once it is large: the next single reply would not need it.
        if scratch.bytes.capacity > Self.keptCapacity { scratch.bytes = [] }
    }

    /// The most scratch capacity kept between batches (a few dozen replies).
    private static let keptCapacity = 8 * 1024

    private func endsInCRLF(replyAt index: Int, of batch: ReplyBatch) -> Bool {
        switch batch.lineEnding ?? lineEnding {
        case .lf: false
        case .crlf: true
        case .auto: index < batch.lines.count && batch.lines[index].lineEnding.wantsCRLF
        }
    }
}
