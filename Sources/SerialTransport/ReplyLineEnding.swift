/// How reply lines end on the wire (`serial.reply_line_ending`).
///
/// Serial terminals (picocom, screen, minicom) send CR for Enter and show a bare LF as a staircase, so by
/// default a reply ends the way the device's last line did: CRLF after a line ended by CR or CRLF, LF after LF.
public enum ReplyLineEnding: String, Sendable, CaseIterable {
    case auto
    case lf
    case crlf
}

/// The ending of the last line framed on one device's channel, for `ReplyLineEnding.auto`.
///
/// Written by ``LineFrameDecoder`` and read by ``ReplyLineEncoder`` of the same pipeline, so only ever on
/// that channel's event loop.
public final class LastLineEnding {
    public private(set) var endedWithCR = false

    public init() {}

    func record(endedWithCR: Bool) {
        self.endedWithCR = endedWithCR
    }
}
