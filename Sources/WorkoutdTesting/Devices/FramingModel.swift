/// What the framing rules promise for a byte stream, worked out without the framer.
///
/// How many replies it must produce and how many of them are `line_too_long`.
///
/// An independent model of the protocol's framing section, so the real decoder can be checked
/// against the rules rather than against itself.
public struct FramingExpectation: Hashable, Sendable {
    /// Replies the stream must produce in all.
    public var replies: Int
    /// Of those, the `line_too_long` ones.
    public var tooLong: Int

    public init(replies: Int, tooLong: Int) {
        self.replies = replies
        self.tooLong = tooLong
    }

    /// The expectation for `stream` followed by the device going away.
    ///
    /// Lines end in LF, CR, or CR LF (one end). A line longer than the limit gets one `line_too_long`;
    /// a blank line (spaces, tabs) gets nothing; any other line gets one reply. An unfinished line at
    /// the end gets nothing, unless it is already more than the limit long: then it has been answered
    /// `line_too_long` before its end could arrive.
    public init(stream: some BidirectionalCollection<UInt8>, maximumLineLength: Int) {
        let answered = Self.answeredLines(in: stream, maximumLineLength: maximumLineLength)
        self.init(replies: answered.count, tooLong: answered.count(where: { $0 == .tooLong }))
    }

    /// A line the stream's replies answer, in order.
    ///
    /// One that fits, with its bytes (terminator stripped), or one over the limit.
    public enum AnsweredLine: Hashable, Sendable {
        case line([UInt8])
        case tooLong
    }

    /// The lines of `stream` that get a reply, by the rules of ``init(stream:maximumLineLength:)``.
    public static func answeredLines(
        in stream: some BidirectionalCollection<UInt8>,
        maximumLineLength: Int
    ) -> [AnsweredLine] {
        var answered: [AnsweredLine] = []
        var rest = stream[...]
        while let newline = rest.firstIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            let line = rest[..<newline]
            if line.count > maximumLineLength {
                answered.append(.tooLong)
            } else if !line.allSatisfy(Self.isBlank) {
                answered.append(.line(Array(line)))
            }
            var next = rest.index(after: newline)
            if rest[newline] == UInt8(ascii: "\r"), next != rest.endIndex, rest[next] == UInt8(ascii: "\n") {
                next = rest.index(after: next)
            }
            rest = rest[next...]
        }
        if rest.count > maximumLineLength {
            answered.append(.tooLong)
        }
        return answered
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
