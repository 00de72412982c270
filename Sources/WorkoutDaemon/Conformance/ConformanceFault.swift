import WorkoutProtocol

/// A fault the conformance hub injects into its answer to one send of a command.
enum ConformanceFault: Sendable, Equatable {
    /// The command runs, its reply is never written: the wearable must time out and resend.
    case replyDropped
    /// The command does not run; the reply is `rate_limited` with this `retry_after_ms`.
    case rateLimited(retryAfter: Duration)
    /// The command does not run; the reply is `storage_unavailable`.
    case storageUnavailable
    /// The command runs; its reply is written this long after the line arrived.
    ///
    /// Past the wearable's timeout, so it resends before the answer comes.
    case replyHeld(Duration)
    /// The reply ends in CR LF instead of LF.
    case crlf

    /// The fault's name in the JSON report.
    var key: String {
        switch self {
        case .replyDropped: "reply_dropped"
        case .rateLimited: "rate_limited"
        case .storageUnavailable: "storage_unavailable"
        case .replyHeld: "reply_held"
        case .crlf: "crlf"
        }
    }

    /// The fault in words, for the text report.
    var summary: String {
        switch self {
        case .replyDropped: "reply dropped"
        case .rateLimited(let wait): "rate_limited, retry_after_ms \(wait.inMilliseconds)"
        case .storageUnavailable: "storage_unavailable"
        case .replyHeld(let hold): "reply held \(hold.inMilliseconds) ms"
        case .crlf: "reply ends in CRLF"
        }
    }
}
