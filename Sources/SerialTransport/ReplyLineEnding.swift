/// How reply lines end on the wire (`serial.reply_line_ending`).
///
/// Serial terminals (picocom, screen, minicom) send CR for Enter and show a bare LF as a staircase, so by
/// default each reply ends the way the line it answers did: CRLF for a line ended by CR or CRLF, LF for LF.
public enum ReplyLineEnding: String, Sendable, CaseIterable {
    case auto
    case lf
    case crlf
}
