import Foundation
import Testing
import WorkoutdTesting

/// `limits.session_idle_timeout_s` as an operator sees it.
///
/// `workoutd_sessions_in_memory` drops once a gone device's session has been idle that long, and the device still gets
/// its replays from disk afterwards.
@Suite("Idle sessions leave memory", .serialized)
struct SessionEvictionTests {
    /// Waits (not a timing assertion) until the gauge reads `value`.
    func waitForSessions(_ value: Int, in daemon: TestDaemon) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let sample = try daemon.ctl(["metrics"]).lines.first {
                $0.hasPrefix("workoutd_sessions_in_memory ")
            }
            if let sample, Double(sample.dropFirst("workoutd_sessions_in_memory ".count)) == Double(value) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestingError(
            "workoutd_sessions_in_memory never read \(value): \(try daemon.ctl(["metrics"]).stdout)"
        )
    }

    @Test func aGoneDevicesSessionLeavesMemoryAndItsRepliesStayOnDisk() async throws {
        try await DaemonTestHarness.run(
            .inProcess,
            configuration: "log_level: info\nlimits:\n  session_idle_timeout_s: 2\n"
        ) { daemon in
            // A session made on purpose for a name no device holds: once answered, nothing holds it but the engine.
            let line = CommandLines.start(id: 7, location: "Ghost gym")
            let first = try daemon.ctl(["send", "--device", "ghost", "--create", "--json", line])
            #expect(first.status == 0 && !first.stdout.contains("replayed"), "\(first.stdout)")
            try await waitForSessions(1, in: daemon)
            try await waitForSessions(0, in: daemon)

            let again = try daemon.ctl(["send", "--device", "ghost", "--create", "--json", line])
            #expect(again.status == 0)
            #expect(
                again.stdout.replacingOccurrences(of: " ", with: "").contains(#""replayed":true"#),
                "\(again.stdout)"
            )
        }
    }
}
