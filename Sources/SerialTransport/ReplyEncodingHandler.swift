import NIOCore
import WorkoutProtocol

/// Encodes each ``Reply`` as one compact JSON line.
public struct ReplyLineEncoder: MessageToByteEncoder {
    public typealias OutboundIn = Reply

    private let encoder = ReplyEncoder()

    public init() {}

    public func encode(data: Reply, out: inout ByteBuffer) throws {
        out.writeBytes(encoder.encodeLine(data))
    }
}
