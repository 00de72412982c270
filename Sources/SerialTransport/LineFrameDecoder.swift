#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// A framed unit from the byte stream: a complete line (terminator stripped), or the marker for a
/// line that exceeded the limit and was discarded.
public enum LineFrame: Sendable, Equatable {
    case line(ByteBuffer)
    case tooLong
}

/// Splits bytes into lines on LF (a CR before it is dropped), skipping blank lines.
///
/// A line longer than `maximumLineLength` yields one ``LineFrame/tooLong`` and is then discarded
/// up to the next LF without being buffered, so memory stays bounded whatever the device sends.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineFrame

    public let maximumLineLength: Int
    private var discarding = false
    /// Bytes of the buffered partial line already searched for LF, so a slow line is scanned once.
    private var scanned = 0

    public init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = Self.firstNewline(in: buffer, from: scanned).map({ view.startIndex + $0 }) else {
            if discarding {
                buffer.moveReaderIndex(forwardBy: view.count)
                scanned = 0
            } else if view.count > maximumLineLength + 1 {  // +1: a CR may still precede the LF
                buffer.moveReaderIndex(forwardBy: view.count)
                scanned = 0
                discarding = true
                context.fireChannelRead(wrapInboundOut(.tooLong))
            } else {
                scanned = view.count
            }
            return .needMoreData
        }

        let lineLength = newline - view.startIndex
        scanned = 0
        if discarding {
            buffer.moveReaderIndex(forwardBy: lineLength + 1)
            discarding = false
            return .continue
        }
        guard var line = buffer.readSlice(length: lineLength) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        if line.readableBytes > maximumLineLength {
            context.fireChannelRead(wrapInboundOut(.tooLong))
        } else if !line.readableBytesView.allSatisfy(Self.isBlank) {
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A partial line at EOF is a command the device never finished sending: drop it unanswered.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }

    /// The offset (from the reader index) of the first LF at or after `offset`: memchr, since searching
    /// the view byte by byte through `Collection` was a tenth of the device loop's time.
    private static func firstNewline(in buffer: ByteBuffer, from offset: Int) -> Int? {
        buffer.withUnsafeReadableBytes { bytes in
            guard offset < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + offset, 0x0A, bytes.count - offset)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
