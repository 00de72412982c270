import NIOCore
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A framed unit from the byte stream.
///
/// A complete line (terminator stripped), or the marker for a line that exceeded the limit and was discarded; each with
/// how its line ended, for the reply's ending.
public enum LineFrame: Sendable, Equatable {
    case line(ByteBuffer, ending: LineEnding = .lf)
    case tooLong(ending: LineEnding = .lf)
}

/// Splits bytes into lines on LF, CRLF or a lone CR, skipping blank lines.
///
/// A lone CR is what the Enter key of most serial terminals sends. CR followed by LF is one line end, also when the LF
/// arrives in a later read.
///
/// A line longer than `maximumLineLength` yields one ``LineFrame/tooLong`` and is then discarded
/// up to the next line end without being buffered, so memory stays bounded whatever the device sends.
///
/// The limit is read at every decode step, so a reload that changes it (through a shared ``LineLengthLimit``)
/// applies to the open connection from its next read on: a partial line already buffered is judged by the new
/// limit, and a line already being discarded as too long stays discarded up to its end.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineFrame

    public var maximumLineLength: Int { limit.value }
    private let limit: LineLengthLimit
    /// The ending of the last line framed.
    ///
    /// A line reported too long before its end arrives is answered in the style the device has been using.
    private var previousEnding = LineEnding.lf
    private var discarding = false
    /// The last line ended in CR at the end of a read: an LF starting the next read belongs to it.
    private var skipLF = false
    /// Bytes of the buffered partial line already searched for a line end, so a slow line is scanned once.
    private var scanned = 0

    public init(maximumLineLength: Int) {
        self.init(limit: LineLengthLimit(maximumLineLength))
    }

    /// Framed with `limit`, which the device pipeline's ``LineDecodingHandler`` changes on a reload.
    public init(limit: LineLengthLimit) {
        self.limit = limit
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        switch step(&buffer) {
        case .frame(let frame):
            context.fireChannelRead(wrapInboundOut(frame))
            return .continue
        case .skipped:
            return .continue
        case .needMoreData:
            return .needMoreData
        }
    }

    /// What one framing step did with the buffered bytes.
    public enum Step: Equatable {
        /// A line (or the marker of a too-long one) was taken from the buffer.
        case frame(LineFrame)
        /// Bytes were consumed without a frame (a blank line, the end of a discarded one): step again.
        case skipped
        /// No complete line is buffered.
        case needMoreData
    }

    /// One framing step over `buffer`, without a channel.
    ///
    /// ``decode(context:buffer:)`` fires each frame, ``LineDecodingHandler`` decodes it in place.
    public mutating func step(_ buffer: inout ByteBuffer) -> Step {
        if skipLF, let first = buffer.readableBytesView.first {
            skipLF = false
            if first == UInt8(ascii: "\n") { buffer.moveReaderIndex(forwardBy: 1) }
        }
        let available = buffer.readableBytes
        guard let end = Self.firstLineEnd(in: buffer, from: scanned) else {
            if discarding {
                buffer.moveReaderIndex(forwardBy: available)
                scanned = 0
            } else if available > maximumLineLength {
                buffer.moveReaderIndex(forwardBy: available)
                scanned = 0
                discarding = true
                return .frame(.tooLong(ending: previousEnding))
            } else {
                scanned = available
            }
            return .needMoreData
        }

        let lineLength = end.offset
        scanned = 0
        // The terminator: one byte, or CR and LF together; a CR at the end of the read may still get its LF.
        var terminatorLength = 1
        if end.isCR {
            if lineLength + 1 < available {
                if buffer.getInteger(at: buffer.readerIndex + lineLength + 1, as: UInt8.self) == UInt8(ascii: "\n") {
                    terminatorLength = 2
                }
            } else {
                skipLF = true
            }
        }
        // A CR whose LF may come in the next read is answered as CR: both get CRLF replies.
        let ending: LineEnding = !end.isCR ? .lf : terminatorLength == 2 ? .crlf : .cr
        previousEnding = ending
        if discarding {
            buffer.moveReaderIndex(forwardBy: lineLength + terminatorLength)
            discarding = false
            return .skipped
        }
        guard let line = buffer.readSlice(length: lineLength) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: terminatorLength)
        if line.readableBytes > maximumLineLength {
            return .frame(.tooLong(ending: ending))
        } else if !line.readableBytesView.allSatisfy(Self.isBlank) {
            return .frame(.line(line, ending: ending))
        }
        return .skipped
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A partial line at EOF is a command the device never finished sending: drop it unanswered.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }

    /// The offset (from the reader index) of the first LF or CR at or after `offset`, and whether it is CR.
    ///
    /// `memchr` for each (the CR search only up to the LF), since searching the view byte by byte through
    /// `Collection` was a tenth of the device loop's time.
    private static func firstLineEnd(in buffer: ByteBuffer, from offset: Int) -> (offset: Int, isCR: Bool)? {
        buffer.withUnsafeReadableBytes { bytes in
            guard offset < bytes.count, let base = bytes.baseAddress else { return nil }
            let lf = memchr(base + offset, 0x0A, bytes.count - offset).map { base.distance(to: UnsafeRawPointer($0)) }
            let limit = lf ?? bytes.count
            if limit > offset, let cr = memchr(base + offset, 0x0D, limit - offset) {
                return (base.distance(to: UnsafeRawPointer(cr)), true)
            }
            return lf.map { ($0, false) }
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}

/// A device pipeline's line-length limit, shared by its framing decoder and ``LineDecodingHandler``.
///
/// ``LineDecodingHandler`` sets it when a reload sends ``PipelineOptionsChanged``. Used only on the channel's event
/// loop.
public final class LineLengthLimit {
    public var value: Int

    public init(_ value: Int) {
        self.value = value
    }
}
