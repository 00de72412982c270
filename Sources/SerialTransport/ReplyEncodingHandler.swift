import NIOCore
import WorkoutProtocol

/// Encodes a batch's replies as compact JSON lines, one buffer for the batch.
///
/// One write per batch rather than per reply: the per-write cost of the pipeline (a buffer, a pending
/// write, an iovec) was a tenth of what a command cost.
public struct ReplyLineEncoder: MessageToByteEncoder {
    public typealias OutboundIn = [Reply]

    private let encoder = ReplyEncoder()
    private let lineEnding: ReplyLineEnding
    private let lastEnding: LastLineEnding?

    /// With `.auto`, replies end in CRLF when the last line framed into `lastEnding` ended in CR or CRLF.
    public init(lineEnding: ReplyLineEnding = .lf, lastEnding: LastLineEnding? = nil) {
        self.lineEnding = lineEnding
        self.lastEnding = lastEnding
    }

    public func encode(data: [Reply], out: inout ByteBuffer) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 112)
        let crlf = switch lineEnding {
        case .lf: false
        case .crlf: true
        case .auto: lastEnding?.endedWithCR ?? false
        }
        for reply in data {
            encoder.appendLine(reply, to: &bytes)
            // The encoder ends the line in LF; a CR goes in before it.
            if crlf { bytes.insert(UInt8(ascii: "\r"), at: bytes.count - 1) }
        }
        out.writeBytes(bytes)
    }
}
