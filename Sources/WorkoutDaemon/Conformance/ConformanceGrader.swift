import StrictJSON
import WorkoutProtocol

/// Grades a wearable against the ``ConformanceRule``s.
///
/// It is fed what the wearable sent and what the hub wrote back, in order.
///
/// A state machine fed events with their times since the session began, no I/O. Lines that arrive in one read are
/// all given to ``lineReceived(_:at:)`` before the replies they cause are given to ``replyDelivered(_:at:)``:
/// those lines were sent before any of those replies could reach the wearable. How each rule is judged is in
/// docs/protocol.md, "Conformance rules"; the numbers below are the ones written there.
struct ConformanceGrader {
    /// The hub's default line limit (`serial.max_line_bytes`).
    let maximumLineLength: Int
    /// The least pause after `storage_unavailable` (R5).
    static let storageBackoff = Duration.milliseconds(250)
    /// The most sends of one command (R5).
    static let maximumSends = 8
    /// How much earlier than `retry_after_ms` a line may come (R4).
    ///
    /// The wearable's clock ticks in whole milliseconds.
    static let retryAfterTolerance = Duration.milliseconds(10)

    /// One command: the lines with one id.
    private struct CommandRecord {
        var id: CommandID
        var number: Int
        var firstLine: Int
        var firstBytes: [UInt8]
        /// The decoded command, to recognise a resend under a fresh id.
        var command: Command?
        var sends = 1
        /// Some reply with this id was written.
        var answered = false
        /// The last reply with this id written was final (not `rate_limited` or `storage_unavailable`).
        var final = false
    }

    /// What one rule has seen.
    private struct Judgement {
        var judged = 0
        var failures = 0
        var firstFailure: String?
        /// The shortest wait judged (R4, R5), for the report.
        var shortest: Duration?

        mutating func pass(waited wait: Duration? = nil) {
            judged += 1
            if let wait { shortest = min(shortest ?? wait, wait) }
        }

        mutating func fail(_ why: String) {
            judged += 1
            failures += 1
            if firstFailure == nil { firstFailure = why }
        }
    }

    private var records: [CommandRecord] = []
    private var index: [CommandID: Int] = [:]
    private var judgements: [ConformanceRule: Judgement] = [:]
    private var pendingRateLimit: (at: Duration, retryAfter: Duration, id: CommandID?)?
    private var pendingStorage: (at: Duration, id: CommandID?)?
    private let decoder = CommandLineDecoder()
    private(set) var lines = 0

    init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    /// Commands seen so far (distinct ids).
    var commands: Int { records.count }

    /// A line from the wearable, without its line ending; nil for one longer than the line limit.
    mutating func lineReceived(_ line: [UInt8]?, at time: Duration) {
        lines += 1
        let number = lines
        judgeWaits(line: number, at: time)
        guard let line else {
            self[.r1].fail("line \(number) is longer than \(maximumLineLength) bytes")
            return
        }
        if let error = line.withUnsafeBufferPointer(StrictJSONValidator.validate) {
            self[.r1].fail("line \(number) is not JSON: \(error.description)")
            return
        }
        self[.r1].pass()
        let decoded = decoder.decode(line)
        guard let id = decoded.id else {
            self[.r2].fail("line \(number) has no usable id (an integer, or a string of at most 128 bytes)")
            judgeSingleFlight(line: number, id: nil)
            return
        }
        if let known = index[id] {
            resent(known, bytes: line, command: try? decoded.command.get(), line: number)
            return
        }
        let command = try? decoded.command.get()
        // A command still waiting for a final reply, sent again under a new id: the duplicate R3 is about.
        if let command, let earlier = records.last(where: { !$0.final }), earlier.command == command {
            self[.r3].fail(
                "line \(number) resends command \(earlier.number) (id \(earlier.id), line \(earlier.firstLine)) "
                    + "under a fresh id \(id)"
            )
        } else {
            judgeSingleFlight(line: number, id: id)
        }
        self[.r2].pass()
        index[id] = records.count
        records.append(
            CommandRecord(id: id, number: records.count + 1, firstLine: number, firstBytes: line, command: command)
        )
    }

    /// A reply the hub wrote at `time`.
    mutating func replyDelivered(_ reply: DeliveredReply, at time: Duration) {
        if let id = reply.id, let position = index[id] {
            records[position].answered = true
            records[position].final = reply.kind == .final
        }
        switch reply.kind {
        case .rateLimited(let retryAfter): pendingRateLimit = (time, retryAfter, reply.id)
        case .storageUnavailable: pendingStorage = (time, reply.id)
        case .final: break
        }
    }

    /// Every rule's verdict, R1 to R6.
    var verdicts: [RuleVerdict] {
        ConformanceRule.allCases.map { verdict($0) }
    }

    private func verdict(_ rule: ConformanceRule) -> RuleVerdict {
        let judgement = judgements[rule] ?? Judgement()
        if let failure = judgement.firstFailure {
            let more = judgement.failures > 1 ? " (and \(judgement.failures - 1) more)" : ""
            return RuleVerdict(rule: rule, result: .fail, detail: failure + more)
        }
        guard judgement.judged > 0 else {
            return RuleVerdict(rule: rule, result: .notTested, detail: Self.untested(rule))
        }
        let count = judgement.judged
        let shortest = judgement.shortest.map { "\($0.inMilliseconds) ms" } ?? "-"
        let detail =
            switch rule {
            case .r1: "\(count) line\(count == 1 ? "" : "s"), each JSON within \(maximumLineLength) bytes"
            case .r2: "\(count) command\(count == 1 ? "" : "s"), each with an id of its own"
            case .r3: "\(count) resend\(count == 1 ? "" : "s"), each the same id and bytes as the first send"
            case .r4: "next line \(shortest) after rate_limited (shortest of \(count))"
            case .r5:
                "next line \(shortest) after storage_unavailable (shortest of \(count)); "
                    + "no command sent more than \(Self.maximumSends) times"
            case .r6: "\(count) command\(count == 1 ? "" : "s") sent after the earlier one was answered"
            }
        return RuleVerdict(rule: rule, result: .pass, detail: detail)
    }

    private static func untested(_ rule: ConformanceRule) -> String {
        switch rule {
        case .r1: "the wearable sent no line"
        case .r2: "the wearable sent no command"
        case .r3: "the wearable resent nothing (no reply was missed, or it gave up)"
        case .r4: "the wearable sent nothing after a rate_limited reply"
        case .r5: "the wearable sent nothing after a storage_unavailable reply"
        case .r6: "the wearable started no second command (a resend under a fresh id is R3's)"
        }
    }

    private subscript(rule: ConformanceRule) -> Judgement {
        get { judgements[rule] ?? Judgement() }
        set { judgements[rule] = newValue }
    }

    /// R4 and R5: the first line after a `rate_limited` or `storage_unavailable` reply, whatever it is.
    private mutating func judgeWaits(line number: Int, at time: Duration) {
        if let limited = pendingRateLimit {
            pendingRateLimit = nil
            let waited = time - limited.at
            if waited + Self.retryAfterTolerance < limited.retryAfter {
                self[.r4].fail(
                    "line \(number) came \(waited.inMilliseconds) ms after rate_limited "
                        + "with retry_after_ms \(limited.retryAfter.inMilliseconds)"
                )
            } else {
                self[.r4].pass(waited: waited)
            }
        }
        if let storage = pendingStorage {
            pendingStorage = nil
            let waited = time - storage.at
            if waited < Self.storageBackoff {
                self[.r5].fail(
                    "line \(number) came \(waited.inMilliseconds) ms after storage_unavailable "
                        + "(at least \(Self.storageBackoff.inMilliseconds) ms)"
                )
            } else {
                self[.r5].pass(waited: waited)
            }
        }
    }

    /// R6, for a line that starts a command: every earlier command has had a reply.
    private mutating func judgeSingleFlight(line number: Int, id: CommandID?) {
        guard !records.isEmpty else { return }
        if let waiting = records.first(where: { !$0.answered }) {
            let which = id.map { "a new command (id \($0))" } ?? "a new command"
            self[.r6].fail(
                "line \(number) sends \(which) before command \(waiting.number) (id \(waiting.id), "
                    + "line \(waiting.firstLine)) was answered"
            )
        } else {
            self[.r6].pass()
        }
    }

    /// A line with an id already seen.
    ///
    /// A retry (R3) or an id reused for another command (R2); its sends are counted (R5).
    private mutating func resent(_ position: Int, bytes: [UInt8], command: Command?, line number: Int) {
        let record = records[position]
        records[position].sends += 1
        // After its final reply, the same command again is a resend that crossed the reply; another one reuses the id.
        if record.final, command != record.command {
            self[.r2].fail(
                "line \(number) reuses id \(record.id) of command \(record.number) (line \(record.firstLine)), "
                    + "which was already answered, for another command"
            )
        } else if bytes != record.firstBytes {
            self[.r3].fail(
                "line \(number) resends id \(record.id) with other bytes than its first send (line \(record.firstLine))"
            )
        } else if !record.final {
            self[.r3].pass()
        }
        if records[position].sends == Self.maximumSends + 1 {
            self[.r5].fail("id \(record.id) was sent \(Self.maximumSends + 1) times (at most \(Self.maximumSends))")
        }
    }
}
