import WorkoutProtocol

/// What the grader needs to know of a reply the hub wrote.
///
/// Whose it is and what it asks of the wearable.
struct DeliveredReply: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// `ok` or an error that resending the same line will not change.
        case final
        /// `rate_limited`: nothing before `retry_after_ms` has passed.
        case rateLimited(retryAfter: Duration)
        /// `storage_unavailable`: the same line may work after a pause.
        case storageUnavailable
    }

    var id: CommandID?
    var kind: Kind

    init(id: CommandID?, kind: Kind) {
        self.id = id
        self.kind = kind
    }

    init(_ reply: Reply) {
        id = reply.id
        switch reply.outcome {
        case .error(let error) where error.code == .rateLimited:
            kind = .rateLimited(retryAfter: .milliseconds(error.retryAfterMilliseconds ?? 0))
        case .error(let error) where error.code == .storageUnavailable:
            kind = .storageUnavailable
        default:
            kind = .final
        }
    }
}
