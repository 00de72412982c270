import ControlProtocol
import Foundation
import Testing
import WorkoutdTesting

/// At the default level the journal carries what an operator acts on, not routine.
///
/// A share sink that keeps failing is one warning, however many shares and retries, then one line when it recovers.
@Suite(.serialized) struct QuietJournalTests {
    private func configuration(_ device: String, command: String) -> String {
        "devices:\n  - \(device)\nshares:\n  twitter:\n    sink: exec\n    command: [/bin/sh, -c, '\(command)']\n"
    }

    private func waitForCounters(
        _ daemon: TestDaemon,
        _ what: String,
        until done: (ActivityCounters) -> Bool
    ) throws -> ActivityCounters {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let counters = try #require(try daemon.ctlJSON(["status"], as: StatusReport.self).first).counters
            if done(counters) { return counters }
            guard ContinuousClock.now < deadline else {
                throw TestingError("\(what): \(counters)\n\(daemon.log)")
            }
            usleep(50_000)
        }
    }

    private func lines(_ daemon: TestDaemon, containing text: String) -> [Substring] {
        daemon.log.split(separator: "\n").filter { $0.contains(text) }
    }

    @Test func aSinkThatKeepsFailingIsOneWarningThenOneRecoveryLine() async throws {
        let wearable = try SimulatedWearable()
        try await DaemonTestHarness.run(
            .inProcess,
            configuration: configuration(wearable.devicePath, command: "cat > /dev/null; exit 3")
        ) { daemon in
            try daemon.waitUntilConnected(wearable.devicePath)
            #expect(try wearable.request(CommandLines.start(date: "2020-03-16T19:45:13Z")).contains("ok"))
            #expect(try wearable.request(CommandLines.end()).contains("ok"))
            let shares = 5
            for _ in 1...shares {
                #expect(try wearable.request(CommandLines.share()).contains("ok"))
            }
            // Every share failed, and some were retried (after their backoff) and failed again.
            let failing = try waitForCounters(daemon, "shares failed and retried") { $0.shareFailures >= 2 * shares }
            #expect(failing.sharesDelivered == 0)
            let warnings = lines(daemon, containing: "share delivery failed")
            #expect(warnings.count == 1, "one line for \(failing.shareFailures) identical failures: \(warnings)")
            #expect(warnings.first?.contains("exited with status 3") == true)

            // The sink is fixed by a reload: every pending share goes out on its next retry.
            try await daemon.reload(configuration: configuration(wearable.devicePath, command: "cat > /dev/null"))
            let recovered = try waitForCounters(daemon, "shares delivered after the fix") {
                $0.sharesDelivered == shares
            }
            try daemon.waitForLog("share delivery recovered")
            let recovery = lines(daemon, containing: "share delivery recovered")
            #expect(recovery.count == 1)
            #expect(
                recovery.first?.contains(#"repeated="\#(recovered.shareFailures - 1) times""#) == true,
                "the recovery line counts the failures not logged: \(recovery), \(recovered.shareFailures) failures"
            )
            #expect(lines(daemon, containing: "share delivered").isEmpty, "routine deliveries are debug lines")
            #expect(
                lines(daemon, containing: "share").count == 2,
                "the whole episode is two lines at info:\n\(daemon.log)"
            )
        }
    }
}
