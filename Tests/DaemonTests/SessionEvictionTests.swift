import Foundation
import Testing
import WorkoutdTesting

/// `limits.session_idle_timeout_s` as an operator sees it.
///
/// `workoutd_sessions_in_memory` drops once a gone device's session has been idle that long, and the device still gets
/// its replays from disk afterwards.
@Suite("Idle sessions leave memory", .serialized)
struct SessionEvictionTests {
    /// The gauge's value in the metrics the control socket serves.
    func sessionsInMemory(in daemon: TestDaemon) throws -> Double? {
        let sample = try daemon.ctl(["metrics"]).lines.first { $0.hasPrefix("workoutd_sessions_in_memory ") }
        return sample.flatMap { Double($0.dropFirst("workoutd_sessions_in_memory ".count)) }
    }

    @Test func aGoneDevicesSessionLeavesMemoryAndItsRepliesStayOnDisk() async throws {
        try await DaemonTestHarness.run(
            .inProcess,
            configuration: "limits:\n  session_idle_timeout_s: 2\n",
            logLevel: "debug"
        ) { daemon in
            // A session made on purpose for a name no device holds: once answered, nothing holds it but the engine.
            let line = CommandLines.start(id: 7, location: "Ghost gym")
            let first = try daemon.ctl(["send", "--device", "ghost", "--create", "--json", line])
            #expect(first.status == 0 && !first.stdout.contains("replayed"), "\(first.stdout)")
            // The eviction pass says what it evicted; the gauge is recorded before that line, so it reads 0 after.
            try daemon.waitForLog("idle sessions left memory")
            let evicted = daemon.log.split(separator: "\n").first { $0.contains("idle sessions left memory") }
            #expect(evicted?.contains("evicted=1") == true, "\(String(describing: evicted))")
            #expect(try sessionsInMemory(in: daemon) == 0)

            let again = try daemon.ctl(["send", "--device", "ghost", "--create", "--json", line])
            #expect(again.status == 0)
            #expect(
                again.stdout.replacingOccurrences(of: " ", with: "").contains(#""replayed":true"#),
                "\(again.stdout)"
            )
        }
    }
}
