import NIOCore
import SerialTransport
import WorkoutProtocol

/// The decoding handler the device pipeline had before ``LineDecodingHandler`` fused the two stages.
///
/// After `ByteToMessageHandler(LineFrameDecoder)`, it decodes each framed line into a ``DecodedLine`` (a too-long line
/// becomes its error). Kept here only as the reference the fused handler is held to (``FramingTests``): the plain
/// composition of the two pure stages, one line at a time.
final class ReferenceDecodingHandler: ChannelInboundHandler {
    typealias InboundIn = LineFrame
    typealias InboundOut = DecodedLine

    private let decoder = CommandLineDecoder()
    private let maximumLineLength: Int

    init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .line(let buffer, let ending):
            var line = decoder.decode(buffer.readableBytesView)
            line.lineEnding = ending
            context.fireChannelRead(wrapInboundOut(line))
        case .tooLong(let ending):
            context.fireChannelRead(
                wrapInboundOut(
                    DecodedLine(id: nil, command: .failure(.lineTooLong(limit: maximumLineLength)), lineEnding: ending)
                )
            )
        }
    }
}
