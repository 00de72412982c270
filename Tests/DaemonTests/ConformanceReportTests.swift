import Foundation
import Testing

@testable import WorkoutDaemon

/// The report's exit status and its JSON keys, which scripts read.
@Suite struct ConformanceReportTests {
    private func report(_ results: [RuleVerdict.Result]) -> ConformanceReport {
        ConformanceReport(
            device: "/dev/ttyACM0",
            elapsed: .milliseconds(4521),
            ending: .closed,
            lines: 8,
            commands: 3,
            faults: [ConformanceReport.Fault(fault: .rateLimited(retryAfter: .milliseconds(500)), command: 1, send: 2)],
            verdicts: zip(ConformanceRule.allCases, results).map { RuleVerdict(rule: $0, result: $1, detail: "d") }
        )
    }

    @Test func theExitStatusIsZeroOnlyWhenEveryRulePassed() {
        #expect(report(Array(repeating: .pass, count: 6)).exitStatus == 0)
        #expect(report([.pass, .pass, .fail, .notTested, .pass, .pass]).exitStatus == 1)
        #expect(report([.pass, .pass, .pass, .notTested, .pass, .pass]).exitStatus == 2)
    }

    @Test func theTextNamesTheFailedRule() {
        let text = report([.pass, .pass, .fail, .pass, .pass, .pass]).text
        #expect(text.contains("  R3 FAIL       a retry carries the same id and the same bytes (docs/protocol.md#r3)"))
        #expect(text.hasSuffix("result: FAIL (R3)\n"), "\(text)")
    }

    @Test func theJSONKeysAreTheDocumentedOnes() throws {
        let line = try report([.pass, .pass, .fail, .notTested, .pass, .pass]).json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "device", "seconds", "ended", "lines", "commands", "faults", "rules", "result", "failed", "not_tested",
            ]
        )
        #expect(object["result"] as? String == "FAIL")
        #expect(object["failed"] as? [String] == ["R3"])
        #expect(object["not_tested"] as? [String] == ["R4"])
        #expect(object["seconds"] as? Double == 4.521)
        let fault = try #require((object["faults"] as? [[String: Any]])?.first)
        #expect(Set(fault.keys) == ["fault", "command", "send", "retry_after_ms", "injected"])
        #expect(fault["retry_after_ms"] as? Int == 500)
        let rule = try #require((object["rules"] as? [[String: Any]])?.first)
        #expect(Set(rule.keys) == ["rule", "title", "reference", "result", "detail"])
        #expect(rule["reference"] as? String == "docs/protocol.md#r1")
    }
}
