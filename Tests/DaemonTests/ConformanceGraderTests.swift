import Foundation
import Testing

@testable import WorkoutDaemon

/// The conformance grader and hub on a test-driven clock.
///
/// The reference client's behaviour passes every rule, and each broken behaviour fails exactly the rule it breaks,
/// naming the line.
@Suite struct ConformanceGraderTests {
    typealias Wearable = ConformanceWearable

    /// What the reference client does against the standard plan.
    ///
    /// Timeouts of 1 s, `retry_after_ms` honoured, a 1 s pause after `storage_unavailable`.
    private func referenceRun() -> Wearable {
        var wearable = Wearable()
        #expect(wearable.send(Wearable.start(1), at: 0).isEmpty, "the first reply is dropped")
        #expect(wearable.send(Wearable.start(1), at: 1000).first?.contains(#""retry_after_ms":500"#) == true)
        #expect(wearable.send(Wearable.start(1), at: 1500).first?.contains(#""replayed":true"#) == true)
        #expect(wearable.send(Wearable.end(2), at: 1510).first?.contains("storage_unavailable") == true)
        #expect(wearable.send(Wearable.end(2), at: 2510).isEmpty, "held")
        #expect(wearable.send(Wearable.end(2), at: 3510).isEmpty, "behind the held one")
        #expect(wearable.deliver(through: .milliseconds(4010)).count == 2)
        #expect(wearable.send(Wearable.share(3), at: 4020).first?.hasSuffix("}\r\n") == true)
        return wearable
    }

    @Test func theReferenceBehaviourPassesEveryRule() {
        let wearable = referenceRun()
        #expect(wearable.grader.verdicts.allSatisfy { $0.result == .pass }, "\(wearable.grader.verdicts)")
        #expect(wearable.detail(.r4).contains("500 ms after rate_limited"), "\(wearable.detail(.r4))")
        #expect(
            wearable.hub.injected.map(\.fault.key) == [
                "reply_dropped", "rate_limited", "storage_unavailable", "reply_held", "crlf",
            ]
        )
    }

    @Test func repliesAreTheDaemonsOwnWithRealWorkoutIDs() {
        let wearable = referenceRun()
        let replies = wearable.received
        #expect(replies.first { $0.contains("start_workout") && $0.contains(#""workout_id":1"#) } != nil, "\(replies)")
        #expect(replies.contains { $0.contains(#""command_type":"end_workout","id":2,"workout_id":1"#) })
        #expect(replies.last?.contains(#""share_id":1"#) == true, "\(replies)")
        // The resend after the held reply is answered from memory, not run again.
        #expect(replies.filter { $0.contains("end_workout") && $0.contains(#""replayed":true"#) }.count == 1)
    }

    @Test func aLineThatIsNotJSONOrTooLongFailsR1() {
        var wearable = Wearable()
        wearable.send(#"{"command_type":"end_workout","id":1,}"#, at: 0)
        #expect(wearable.failed == [.r1])
        #expect(wearable.detail(.r1).hasPrefix("line 1 is not JSON"), "\(wearable.detail(.r1))")
        var long = Wearable()
        long.sendTooLong(at: 0)
        #expect(long.failed == [.r1])
        #expect(long.detail(.r1) == "line 1 is longer than 4096 bytes")
    }

    @Test func anIDReusedForAnotherCommandFailsR2() {
        var wearable = Wearable()
        wearable.send(Wearable.start(7), at: 0)
        wearable.send(Wearable.start(7), at: 1000)
        wearable.send(Wearable.start(7), at: 1500)
        wearable.send(Wearable.end(7), at: 1600)
        #expect(wearable.failed == [.r2])
        #expect(wearable.detail(.r2).hasPrefix("line 4 reuses id 7 of command 1"), "\(wearable.detail(.r2))")
    }

    @Test func aResendThatCrossedItsFinalReplyIsARetryNotAReusedID() {
        var wearable = Wearable()
        wearable.send(Wearable.start(7), at: 0)
        wearable.send(Wearable.start(7), at: 1000)
        wearable.send(Wearable.start(7), at: 1500)
        wearable.send(Wearable.start(7), at: 1501)
        #expect(wearable.failed.isEmpty, "the same bytes again: \(wearable.grader.verdicts)")
        wearable.send(Wearable.start(7).replacingOccurrences(of: ",", with: ", "), at: 1502)
        #expect(wearable.failed == [.r3], "the same command in other bytes is a retry that differs")
    }

    @Test func aCommandWithoutAnIDFailsR2() {
        var wearable = Wearable()
        wearable.send(#"{"command_type":"end_workout"}"#, at: 0)
        #expect(wearable.failed == [.r2])
    }

    @Test func aRetryWithOtherBytesFailsR3() {
        var wearable = Wearable()
        wearable.send(Wearable.start(1), at: 0)
        wearable.send(Wearable.start(1).replacingOccurrences(of: "Gary", with: "Mary"), at: 1000)
        #expect(wearable.failed == [.r3])
        #expect(wearable.detail(.r3).hasPrefix("line 2 resends id 1 with other bytes"), "\(wearable.detail(.r3))")
    }

    @Test func aRetryUnderAFreshIDFailsR3NotR6() {
        var wearable = Wearable()
        wearable.send(Wearable.start(1), at: 0)
        wearable.send(Wearable.start(2), at: 1000)
        #expect(wearable.failed == [.r3])
        #expect(wearable.detail(.r3).contains("under a fresh id 2"), "\(wearable.detail(.r3))")
        #expect(wearable.detail(.r6) == "the wearable started no second command (a resend under a fresh id is R3's)")
    }

    @Test func aLineBeforeRetryAfterFailsR4() {
        var wearable = Wearable()
        wearable.send(Wearable.start(1), at: 0)
        wearable.send(Wearable.start(1), at: 1000)
        wearable.send(Wearable.start(1), at: 1100)
        #expect(wearable.failed == [.r4])
        #expect(wearable.detail(.r4).hasPrefix("line 3 came 100 ms after rate_limited with retry_after_ms 500"))
    }

    @Test func aResendAtOnceAfterStorageUnavailableFailsR5() {
        var wearable = Wearable()
        wearable.send(Wearable.start(1), at: 0)
        wearable.send(Wearable.start(1), at: 1000)
        wearable.send(Wearable.start(1), at: 1500)
        wearable.send(Wearable.end(2), at: 1510)
        wearable.send(Wearable.end(2), at: 1520)
        #expect(wearable.failed == [.r5])
        #expect(wearable.detail(.r5).hasPrefix("line 5 came 10 ms after storage_unavailable"))
    }

    @Test func aCommandSentNineTimesFailsR5() {
        var wearable = Wearable()
        wearable.send(Wearable.start(1), at: 0)
        wearable.send(Wearable.start(1), at: 1000)
        for send in 0..<7 { wearable.send(Wearable.start(1), at: 1500 + 1000 * send) }
        #expect(wearable.failed == [.r5])
        #expect(wearable.detail(.r5) == "id 1 was sent 9 times (at most 8)")
    }

    @Test func aCommandBeforeTheEarlierOneIsAnsweredFailsR6() {
        var wearable = Wearable()
        wearable.send(Wearable.start(1), at: 0)
        wearable.send(Wearable.end(2), at: 1000)
        #expect(wearable.failed == [.r6])
        #expect(wearable.detail(.r6).hasPrefix("line 2 sends a new command (id 2) before command 1"))
    }

    @Test func linesOfOneReadAreSentBeforeTheReplyToTheFirst() {
        // The reply to line 1 is written after the read that carried both lines: line 2 did not wait for it.
        var grader = ConformanceGrader(maximumLineLength: 4096)
        grader.lineReceived(Array(Wearable.start(1).utf8), at: .zero)
        grader.lineReceived(Array(Wearable.end(2).utf8), at: .zero)
        grader.replyDelivered(DeliveredReply(id: .integer(1), kind: .final), at: .zero)
        #expect(grader.verdicts.filter { $0.result == .fail }.map(\.rule) == [.r6])
    }

    @Test func rulesTheWearableGaveNoChanceToJudgeAreNotTested() {
        let silent = ConformanceGrader(maximumLineLength: 4096)
        #expect(silent.verdicts.allSatisfy { $0.result == .notTested })
        var once = Wearable()
        once.hub = ConformanceHub(plan: FaultPlan(commands: [], everySend: [:]), maximumLineLength: 4096)
        once.send(Wearable.start(1), at: 0)
        #expect(once.grader.verdicts.filter { $0.result == .pass }.map(\.rule) == [.r1, .r2])
        #expect(once.detail(.r4) == "the wearable sent nothing after a rate_limited reply")
    }
}
