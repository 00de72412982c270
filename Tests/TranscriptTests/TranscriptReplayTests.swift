import Foundation
import Testing
import WorkoutdTesting

/// Replays every `Tests/Transcripts/*.transcript` twice.
///
/// In process through the daemon's device pipeline, and live against a fresh `workoutd` serving a real pty, as a
/// wearable would. Adding a regression case is adding a file.
@Suite("Transcript replay", .serialized)
struct TranscriptReplayTests {
    /// The two ways a transcript runs (``TranscriptTarget``'s implementations).
    enum Target: String, CaseIterable, CustomTestStringConvertible {
        case inProcess = "in process"
        case liveDaemon = "live daemon"

        var testDescription: String { rawValue }

        /// The live daemon outside `make check`'s fast lane only.
        static var inLane: [Target] { TestLane.runsLiveDaemons ? allCases : [.inProcess] }

        func make() async throws -> any TranscriptTarget {
            switch self {
            case .inProcess: try await InProcessTranscriptTarget()
            case .liveDaemon: try DaemonTranscriptTarget()
            }
        }
    }

    @Test("the transcript folder holds the committed cases")
    func folderIsPopulated() {
        #expect(Transcript.names().count >= 8, "transcripts found in \(Transcript.folder.path): \(Transcript.names())")
    }

    @Test("replay", arguments: Transcript.names(), Target.inLane)
    func replay(name: String, target kind: Target) async throws {
        let transcript = try Transcript(named: name)
        let target = try await kind.make()
        for step in transcript.steps {
            switch step {
            case .send(let bytes):
                try await target.send(bytes)
            case .expect(let pattern, let line):
                let reply: String
                do {
                    reply = try await target.nextReply()
                } catch {
                    Issue.record(
                        "\(name):\(line) (\(target.name)): expected \(pattern), got no reply (\(error))\n\(target.diagnostics)"
                    )
                    return
                }
                if let problem = pattern.mismatch(reply) {
                    Issue.record(
                        "\(name):\(line) (\(target.name)): \(problem)\n  expected \(pattern)\n  got      \(reply)"
                    )
                }
            }
        }
        let extra = try await target.finish()
        #expect(extra.isEmpty, "\(name) (\(target.name)): replies nobody expected: \(extra)")
    }
}
