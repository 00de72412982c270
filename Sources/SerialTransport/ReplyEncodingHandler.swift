import NIOCore
import WorkoutProtocol

/// Encodes a batch's replies as compact JSON lines, one buffer for the batch.
///
/// One write per batch rather than per reply: the per-write cost of the pipeline (a buffer, a pending
/// write, an iovec) was a tenth of what a command cost.
public struct ReplyLineEncoder: MessageToByteEncoder {
    public typealias OutboundIn = [Reply]

    private let encoder = ReplyEncoder()

    public init() {}

    public func encode(data: [Reply], out: inout ByteBuffer) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 112)
        for reply in data { encoder.appendLine(reply, to: &bytes) }
        out.writeBytes(bytes)
    }
}
