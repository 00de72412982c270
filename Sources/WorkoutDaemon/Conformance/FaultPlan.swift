/// Which fault the conformance hub injects into which send of which command.
///
/// Commands are numbered from 1 in the order their ids first arrive, sends of one id from 1. The standard plan fits the
/// reference example (three commands, a 1 s timeout, up to five sends): every fault lands on a send that wearable
/// makes, and no command needs more than three sends from a wearable that follows the rules.
struct FaultPlan: Sendable {
    /// The faults of each command by send; nil: answer normally.
    ///
    /// Index 0 is command 1, and within it the first send.
    var commands: [[ConformanceFault?]]
    /// A fault for every send of this command, after its own list (the CRLF command's).
    var everySend: [Int: ConformanceFault]

    /// How long a held reply waits.
    ///
    /// Past the reference example's 1 s timeout, so it resends once before the answer, and clear of its second
    /// timeout, so the answer and a further resend do not cross.
    static let holdTime = Duration.milliseconds(1500)
    /// The `retry_after_ms` the injected `rate_limited` carries.
    static let retryAfter = Duration.milliseconds(500)

    /// Command 1: its first reply dropped, its second send `rate_limited`. Command 2: `storage_unavailable`, then
    /// the reply held past the timeout. Command 3: replies in CRLF.
    static let standard = FaultPlan(
        commands: [
            [.replyDropped, .rateLimited(retryAfter: retryAfter)],
            [.storageUnavailable, .replyHeld(holdTime)],
        ],
        everySend: [3: .crlf]
    )

    /// The fault for send `send` of command `command` (both from 1).
    func fault(command: Int, send: Int) -> ConformanceFault? {
        if command >= 1, command <= commands.count, send >= 1, send <= commands[command - 1].count,
            let fault = commands[command - 1][send - 1]
        {
            return fault
        }
        return everySend[command]
    }

    /// Every planned fault with its command and send, in order, for the report's list.
    var planned: [(command: Int, send: Int, fault: ConformanceFault)] {
        var all: [(command: Int, send: Int, fault: ConformanceFault)] = []
        for (index, sends) in commands.enumerated() {
            for (sendIndex, fault) in sends.enumerated() {
                if let fault { all.append((index + 1, sendIndex + 1, fault)) }
            }
        }
        for (command, fault) in everySend.sorted(by: { $0.key < $1.key }) {
            all.append((command, 1, fault))
        }
        return all
    }
}
