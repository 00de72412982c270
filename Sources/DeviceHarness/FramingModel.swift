/// What the framing rules promise for a byte stream, worked out without the framer: how many
/// replies it must produce and how many of them are `line_too_long`.
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
        var replies = 0
        var tooLong = 0
        var rest = stream[...]
        while let newline = rest.firstIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            let line = rest[..<newline]
            if line.count > maximumLineLength {
                replies += 1
                tooLong += 1
            } else if !line.allSatisfy(Self.isBlank) {
                replies += 1
            }
            var next = rest.index(after: newline)
            if rest[newline] == UInt8(ascii: "\r"), next != rest.endIndex, rest[next] == UInt8(ascii: "\n") {
                next = rest.index(after: next)
            }
            rest = rest[next...]
        }
        if rest.count > maximumLineLength {
            replies += 1
            tooLong += 1
        }
        self.init(replies: replies, tooLong: tooLong)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
