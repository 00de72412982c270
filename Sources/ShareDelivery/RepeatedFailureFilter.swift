/// Decides which outcomes of a retried operation deserve a log line.
///
/// So a sink that stays down is one line, not one per share and retry: the first failure, a failure unlike the one
/// before, and the recovery — the last two with how many identical failures were held back since the last line.
///
/// A pure state machine (no I/O, no clock): the caller keeps one per thing that can fail (a share service).
public struct RepeatedFailureFilter: Sendable {
    /// Identical failures that were counted instead of logged.
    public struct HeldBack: Sendable, Hashable {
        public var description: String
        public var count: Int
    }

    public enum Decision: Sendable, Hashable {
        /// A new or different failure.
        ///
        /// Log it (after summarising `replacing`, the failure it ends, when copies of that one were held back).
        case logFailure(replacing: HeldBack?)
        /// The same failure as the last one logged: counted, not logged.
        case holdBack
        /// The first success after failing: log the recovery, with the copies of the failure held back.
        case logRecovery(HeldBack)
        /// Success while nothing was failing: routine.
        case routine
    }

    /// The failure in progress: its description and the copies of it not logged.
    private var ongoing: HeldBack?

    public init() {}

    public mutating func failed(_ description: String) -> Decision {
        guard let current = ongoing else {
            ongoing = HeldBack(description: description, count: 0)
            return .logFailure(replacing: nil)
        }
        guard current.description != description else {
            ongoing?.count += 1
            return .holdBack
        }
        ongoing = HeldBack(description: description, count: 0)
        return .logFailure(replacing: current.count > 0 ? current : nil)
    }

    public mutating func succeeded() -> Decision {
        guard let current = ongoing else { return .routine }
        ongoing = nil
        return .logRecovery(current)
    }
}
