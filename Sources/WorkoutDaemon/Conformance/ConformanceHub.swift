import Foundation
import WorkoutEngine
import WorkoutProtocol

/// The hub's side of a conformance session.
///
/// It answers each line as workoutd does, with the faults of a ``FaultPlan``.
///
/// The answers come from the daemon's own decoder, session machine and reply encoder over an in-memory session,
/// so workout and share ids are real and a retried id is answered from memory. No I/O: the session writes the
/// replies it returns, at their due time, in order.
struct ConformanceHub {
    /// A reply to write, and what the grader is told when it is written.
    struct Answer {
        var bytes: [UInt8]
        /// When to write it: a held reply later than the line's arrival, every other one at once.
        var due: Duration
        var delivered: DeliveredReply
    }

    /// A fault injected into the answer to one line.
    struct Injected: Sendable, Equatable {
        var fault: ConformanceFault
        var command: Int
        var send: Int
        var id: CommandID
        /// The line (from 1) it answered.
        var line: Int
    }

    let plan: FaultPlan
    let maximumLineLength: Int
    private(set) var injected: [Injected] = []
    private var machine = SessionMachine(identity: "conformance")
    private let ids = IDAllocator()
    private let decoder = CommandLineDecoder()
    private let encoder = ReplyEncoder()
    /// Each id's command number and sends so far.
    private var commands: [CommandID: (command: Int, sends: Int)] = [:]
    private var lines = 0

    init(plan: FaultPlan = .standard, maximumLineLength: Int) {
        self.plan = plan
        self.maximumLineLength = maximumLineLength
    }

    /// Commands seen so far (distinct ids).
    var commandCount: Int { commands.count }

    /// The answer to a line (nil for a too-long one) that arrived at `time`; nil when the fault drops it.
    mutating func answer(_ line: [UInt8]?, at time: Duration) -> Answer? {
        lines += 1
        guard let line else {
            return answer(.error(.lineTooLong(limit: maximumLineLength), id: nil), due: time, crlf: false)
        }
        let decoded = decoder.decode(line)
        guard let id = decoded.id else { return answer(run(decoded), due: time, crlf: false) }
        var entry = commands[id] ?? (command: commands.count + 1, sends: 0)
        entry.sends += 1
        commands[id] = entry
        let fault = plan.fault(command: entry.command, send: entry.sends)
        if let fault {
            injected.append(Injected(fault: fault, command: entry.command, send: entry.sends, id: id, line: lines))
        }
        switch fault {
        case .replyDropped?:
            _ = run(decoded)
            return nil
        case .rateLimited(let wait)?:
            return answer(
                .error(.rateLimited(retryAfterMilliseconds: wait.inMilliseconds), id: id),
                due: time,
                crlf: false
            )
        case .storageUnavailable?:
            return answer(.error(.storageUnavailable, id: id), due: time, crlf: false)
        case .replyHeld(let hold)?:
            return answer(run(decoded), due: time + hold, crlf: false)
        case .crlf?:
            return answer(run(decoded), due: time, crlf: true)
        case nil:
            return answer(run(decoded), due: time, crlf: false)
        }
    }

    private mutating func run(_ line: DecodedLine) -> Reply {
        machine.run([line], ids: ids, now: { Date() }).replies.first ?? .error(.storageUnavailable, id: line.id)
    }

    private func answer(_ reply: Reply, due: Duration, crlf: Bool) -> Answer {
        var bytes = encoder.encodeLine(reply)
        if crlf { bytes.insert(UInt8(ascii: "\r"), at: bytes.count - 1) }
        return Answer(bytes: bytes, due: due, delivered: DeliveredReply(reply))
    }
}
