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
    /// Lines end in LF, and one CR before it is not part of the line. A line longer than the limit
    /// gets one `line_too_long`; a blank line (spaces, tabs, CRs) gets nothing; any other line gets
    /// one reply. An unfinished line at the end gets nothing, unless it is already more than the
    /// limit plus a CR long: then it has been answered `line_too_long` before its LF could arrive.
    public init(stream: some BidirectionalCollection<UInt8>, maximumLineLength: Int) {
        var replies = 0
        var tooLong = 0
        var rest = stream[...]
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            var line = rest[..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.count > maximumLineLength {
                replies += 1
                tooLong += 1
            } else if !line.allSatisfy(Self.isBlank) {
                replies += 1
            }
            rest = rest[rest.index(after: newline)...]
        }
        if rest.count > maximumLineLength + 1 {
            replies += 1
            tooLong += 1
        }
        self.init(replies: replies, tooLong: tooLong)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
