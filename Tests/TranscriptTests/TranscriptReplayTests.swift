#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import WorkoutdTesting

/// Replays every `Tests/Transcripts/*.transcript` against a fresh `workoutd` serving a real pty,
/// as a wearable would: adding a regression case is adding a file.
@Suite("Transcript replay", .serialized)
struct TranscriptReplayTests {
    /// Gap between writes, so consecutive sends reach the daemon as separate reads.
    static let writeGap: useconds_t = 20_000
    /// How long to listen for a reply nobody expected after the last step.
    static let quietPeriod: Duration = .milliseconds(300)

    @Test("the transcript folder holds the committed cases")
    func folderIsPopulated() {
        #expect(Transcript.names().count >= 8, "transcripts found in \(Transcript.folder.path): \(Transcript.names())")
    }

    @Test("replay", arguments: Transcript.names())
    func replay(name: String) throws {
        let transcript = try Transcript(named: name)
        let stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("workoutd-transcript-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: stateDirectory) }

        let wearable = try SimulatedWearable()
        let daemon = try DaemonProcess(arguments: [
            "--device", wearable.devicePath, "--state-dir", stateDirectory.path, "--log-level", "debug",
        ])
        defer { daemon.stop() }
        try daemon.waitForLog("device connected")

        var previousWasSend = false
        for step in transcript.steps {
            switch step {
            case .send(let bytes):
                if previousWasSend { usleep(Self.writeGap) }
                try wearable.write(bytes)
                previousWasSend = true
            case .expect(let pattern, let line):
                previousWasSend = false
                let reply: String
                do {
                    reply = try wearable.readLine(timeout: .seconds(5))
                } catch {
                    Issue.record("\(name):\(line): expected \(pattern), got no reply (\(error))\n\(daemon.log)")
                    return
                }
                if let problem = pattern.mismatch(reply) {
                    Issue.record("\(name):\(line): \(problem)\n  expected \(pattern)\n  got      \(reply)")
                }
            }
        }
        let extra = wearable.drain(for: Self.quietPeriod)
        #expect(extra.isEmpty, "\(name): replies nobody expected: \(String(decoding: extra, as: UTF8.self))")
        #expect(daemon.process.isRunning, "\(name): workoutd exited during the replay:\n\(daemon.log)")
    }
}
