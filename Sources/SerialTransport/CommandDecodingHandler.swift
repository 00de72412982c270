import NIOCore
import WorkoutProtocol

/// Decodes each framed line into a ``CommandLine``; a too-long line becomes its error.
public final class CommandDecodingHandler: ChannelInboundHandler {
    public typealias InboundIn = LineFrame
    public typealias InboundOut = CommandLine

    private let decoder = CommandLineDecoder()
    private let maximumLineLength: Int

    public init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .line(let buffer, let ending):
            var line = decoder.decode(buffer.readableBytesView)
            line.lineEnding = ending
            context.fireChannelRead(wrapInboundOut(line))
        case .tooLong(let ending):
            context.fireChannelRead(wrapInboundOut(
                CommandLine(id: nil, command: .failure(.lineTooLong(limit: maximumLineLength)), lineEnding: ending)))
        }
    }
}
