import NIOCore
import WorkoutProtocol

/// Frames a read's bytes into lines and decodes each: what one read delivered, as one `[DecodedLine]`.
///
/// Two stages in one handler, on purpose: as `ByteToMessageHandler(LineFrameDecoder)` followed by a decoding
/// handler, every line crossed the pipeline twice more, each time boxed in an `NIOAny` (a ``LineFrame`` and a
/// ``DecodedLine`` are too large to be stored inline), which with the hand-overs was a noticeable part of a
/// pipelined command's time. Here a line is framed by ``LineFrameDecoder/step(_:)`` and decoded by ``CommandLineDecoder``
/// in place, and the read's lines go on as one array, stored inline. Both stages stay pure and are tested on
/// their own, and this handler against the two-handler pair (kept in the tests as its reference).
///
/// Framing state and the line limit behave exactly as in ``LineFrameDecoder`` (the limit is read at every
/// step, so a reload applies from the next read on); a partial line left at end of stream is dropped.
public final class LineDecodingHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = [DecodedLine]

    private var framer: LineFrameDecoder
    private let decoder = CommandLineDecoder()
    private let limit: LineLengthLimit
    /// The unfinished line of earlier reads (bytes not yet framed).
    private var buffered: ByteBuffer?
    /// The array of the last read's lines, kept for the next read to fill again.
    ///
    /// By then the batch has usually been answered and its events announced, so nothing else holds it and the read
    /// costs no new array.
    private var lastLines: [DecodedLine] = []

    public init(limit: LineLengthLimit) {
        self.limit = limit
        self.framer = LineFrameDecoder(limit: limit)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var input = unwrapInboundIn(data)
        if var earlier = buffered {
            buffered = nil
            earlier.writeBuffer(&input)
            input = earlier
        }
        var lines = reusableLines()
        // About one line per 64 bytes (commands are 40-130): the array is not copied as it grows.
        lines.reserveCapacity(input.readableBytes / 64 + 1)
        frames: while true {
            switch framer.step(&input) {
            case .frame(let frame): lines.append(decode(frame))
            case .skipped: continue
            case .needMoreData: break frames
            }
        }
        if input.readableBytes > 0 {
            // Only a partial line (at most the limit) stays: moved to the front, it is copied once per read.
            input.discardReadBytes()
            buffered = input
        }
        if !lines.isEmpty { context.fireChannelRead(wrapInboundOut(lines)) }
        if lines.capacity <= Self.keptCapacity { lastLines = lines }
    }

    /// The most lines whose array is kept for the next read.
    ///
    /// A lone command's array is kept, a pipelined burst's is not.
    private static let keptCapacity = 64

    /// An empty array for this read's lines: the last read's, unless the batch still holds it.
    private func reusableLines() -> [DecodedLine] {
        var lines: [DecodedLine] = []
        swap(&lines, &lastLines)
        // Emptied in place when nothing else holds it; otherwise a new array of the same capacity, as before.
        lines.removeAll(keepingCapacity: true)
        return lines
    }

    private func decode(_ frame: LineFrame) -> DecodedLine {
        switch frame {
        case .line(let buffer, let ending):
            var line = buffer.withUnsafeReadableBytes { decoder.decode($0) }
            line.lineEnding = ending
            return line
        case .tooLong(let ending):
            return DecodedLine(id: nil, command: .failure(.lineTooLong(limit: limit.value)), lineEnding: ending)
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        // A partial line at end of stream is a command the device never finished sending: dropped unanswered.
        buffered = nil
        lastLines = []
        context.fireChannelInactive()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let change = event as? PipelineOptionsChanged {
            limit.value = change.options.maximumLineLength
        } else if case .some(.inputClosed) = event as? ChannelEvent {
            buffered = nil
        }
        context.fireUserInboundEventTriggered(event)
    }
}
