/// How a line arrived terminated on the wire: LF, CR LF, or a lone CR (a serial terminal's Enter).
///
/// Carried with each line so its reply can end the same way; one byte, so it costs nothing per line.
public enum LineEnding: UInt8, Sendable, Hashable {
    case lf
    case crlf
    case cr

    /// Whether a reply in the style of this line ends in CR LF.
    ///
    /// Serial terminals show a bare LF as a staircase.
    public var wantsCRLF: Bool { self != .lf }
}
