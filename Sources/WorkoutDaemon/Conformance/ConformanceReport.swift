import Foundation
import WorkoutProtocol

/// What `workoutd conformance` prints.
///
/// Each rule's verdict, the faults injected, and the overall result.
///
/// The JSON form's keys are documented in docs/wearables.md ("The conformance tool") and stay as they are.
struct ConformanceReport: Sendable {
    /// Why the session ended.
    enum Ending: String, Sendable, Codable {
        /// The wearable closed the port (or the other end of the pty went away).
        case closed
        /// Nothing came for ``ConformanceSession/quietTime`` with no reply left to write.
        case quiet
        /// `--seconds` passed.
        case timeLimit = "time_limit"

        var summary: String {
            switch self {
            case .closed: "the wearable closed the port"
            case .quiet: "the wearable went quiet"
            case .timeLimit: "the time limit"
            }
        }
    }

    /// One planned fault, and the line it was injected into if the wearable got that far.
    struct Fault: Sendable {
        var fault: ConformanceFault
        var command: Int
        var send: Int
        var injected: ConformanceHub.Injected?
    }

    var device: String
    var elapsed: Duration
    var ending: Ending
    var lines: Int
    var commands: Int
    var faults: [Fault]
    var verdicts: [RuleVerdict]

    /// The overall result: FAIL if a rule failed, else NOT TESTED if one was not tested, else PASS.
    var result: RuleVerdict.Result {
        if verdicts.contains(where: { $0.result == .fail }) { return .fail }
        if verdicts.contains(where: { $0.result == .notTested }) { return .notTested }
        return .pass
    }

    /// 0 when every rule passed, 1 when one failed, 2 when none failed but one was not tested.
    var exitStatus: Int32 {
        switch result {
        case .pass: 0
        case .fail: 1
        case .notTested: 2
        }
    }

    func rules(_ result: RuleVerdict.Result) -> [ConformanceRule] {
        verdicts.filter { $0.result == result }.map(\.rule)
    }

    /// The report a person reads.
    var text: String {
        let seconds = String(format: "%.1f", elapsed.inSeconds)
        var out =
            "workoutd conformance: \(UntrustedText.escaped(device)), \(seconds) s, \(lines) line\(lines == 1 ? "" : "s"), "
        out += "\(commands) command\(commands == 1 ? "" : "s"); ended: \(ending.summary)\n"
        out += "faults:\n"
        for fault in faults {
            let planned = "command \(fault.command), send \(fault.send): \(fault.fault.summary)"
            let pad = String(repeating: " ", count: max(1, 52 - planned.count))
            if let injected = fault.injected {
                out += "  \(planned)\(pad)line \(injected.line), id \(UntrustedText.escaped(injected.id.description))\n"
            } else {
                out += "  \(planned)\(pad)not reached\n"
            }
        }
        out += "rules:\n"
        for verdict in verdicts {
            let status = verdict.result.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
            out += "  \(verdict.rule.rawValue) \(status) \(verdict.rule.title) (\(verdict.rule.reference))\n"
            out += "     \(UntrustedText.escaped(verdict.detail))\n"
        }
        switch result {
        case .pass:
            out += "result: PASS (R1-R6)\n"
        case .fail:
            out += "result: FAIL (\(rules(.fail).map(\.rawValue).joined(separator: ", ")))\n"
        case .notTested:
            out += "result: NOT TESTED (\(rules(.notTested).map(\.rawValue).joined(separator: ", ")))\n"
        }
        return out
    }

    /// The report as one JSON object, keys sorted.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(Document(self)), as: UTF8.self) + "\n"
    }

    /// The JSON form's shape.
    private struct Document: Encodable {
        struct FaultEntry: Encodable {
            var fault: String
            var command: Int
            var send: Int
            var retryAfterMilliseconds: Int64?
            var holdMilliseconds: Int64?
            var injected: Bool
            var line: Int?
            var id: CommandID?

            enum CodingKeys: String, CodingKey {
                case fault, command, send, injected, line, id
                case retryAfterMilliseconds = "retry_after_ms"
                case holdMilliseconds = "hold_ms"
            }
        }

        struct RuleEntry: Encodable {
            var rule: String
            var title: String
            var reference: String
            var result: String
            var detail: String
        }

        var device: String
        var seconds: Double
        var ended: String
        var lines: Int
        var commands: Int
        var faults: [FaultEntry]
        var rules: [RuleEntry]
        var result: String
        var failed: [String]
        var notTested: [String]

        enum CodingKeys: String, CodingKey {
            case device, seconds, ended, lines, commands, faults, rules, result, failed
            case notTested = "not_tested"
        }

        init(_ report: ConformanceReport) {
            device = report.device
            seconds = (report.elapsed.inSeconds * 1000).rounded() / 1000
            ended = report.ending.rawValue
            lines = report.lines
            commands = report.commands
            faults = report.faults.map { fault in
                var entry = FaultEntry(
                    fault: fault.fault.key,
                    command: fault.command,
                    send: fault.send,
                    injected: fault.injected != nil,
                    line: fault.injected?.line,
                    id: fault.injected?.id
                )
                if case .rateLimited(let wait) = fault.fault { entry.retryAfterMilliseconds = wait.inMilliseconds }
                if case .replyHeld(let hold) = fault.fault { entry.holdMilliseconds = hold.inMilliseconds }
                return entry
            }
            rules = report.verdicts.map {
                RuleEntry(
                    rule: $0.rule.rawValue,
                    title: $0.rule.title,
                    reference: $0.rule.reference,
                    result: $0.result.rawValue,
                    detail: $0.detail
                )
            }
            result = report.result.rawValue
            failed = report.rules(.fail).map(\.rawValue)
            notTested = report.rules(.notTested).map(\.rawValue)
        }
    }
}
