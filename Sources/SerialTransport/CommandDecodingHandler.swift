import NIOCore
import WorkoutProtocol

/// Decodes each framed line into a ``DecodedLine``; a too-long line becomes its error.
public final class CommandDecodingHandler: ChannelInboundHandler {
    public typealias InboundIn = LineFrame
    public typealias InboundOut = DecodedLine

    private let decoder = CommandLineDecoder()
    private let limit: LineLengthLimit
    private var maximumLineLength: Int { limit.value }

    public init(maximumLineLength: Int) {
        self.limit = LineLengthLimit(maximumLineLength)
    }

    /// Shares `limit` with the ``LineFrameDecoder`` in front of it, so a reload changes both at once.
    public init(limit: LineLengthLimit) {
        self.limit = limit
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .line(let buffer, let ending):
            var line = decoder.decode(buffer.readableBytesView)
            line.lineEnding = ending
            context.fireChannelRead(wrapInboundOut(line))
        case .tooLong(let ending):
            context.fireChannelRead(wrapInboundOut(
                DecodedLine(id: nil, command: .failure(.lineTooLong(limit: maximumLineLength)), lineEnding: ending)))
        }
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let change = event as? PipelineOptionsChanged { limit.value = change.options.maximumLineLength }
        context.fireUserInboundEventTriggered(event)
    }
}
