import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A transcript replayed live, as a wearable would.
///
/// A fresh `workoutd` (own state directory, durable store) serving a ``SimulatedWearable``'s pty.
public final class DaemonTranscriptTarget: TranscriptTarget {
    public let name = "live daemon"
    /// Gap between consecutive writes, so each reaches the daemon as a read of its own.
    public static let writeGap: Duration = .milliseconds(20)
    /// How long ``nextReply()`` waits for a reply.
    public static let replyTimeout: Duration = .seconds(5)
    /// How long ``finish()`` listens for a reply nobody expected.
    public static let quietPeriod: Duration = .milliseconds(300)

    private let wearable: SimulatedWearable
    private let daemon: DaemonProcess
    private let stateDirectory: URL
    private var previousWasSend = false

    public init() throws {
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "workoutd-transcript-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        wearable = try SimulatedWearable()
        daemon = try DaemonProcess(arguments: [
            "--device", wearable.devicePath, "--state-dir", stateDirectory.path, "--log-level", "debug",
        ])
        try daemon.waitForLog("device connected")
    }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    public var diagnostics: String { daemon.log }

    public func send(_ bytes: [UInt8]) async throws {
        if previousWasSend { try await Task.sleep(for: Self.writeGap) }
        try wearable.write(bytes)
        previousWasSend = true
    }

    public func nextReply() async throws -> String {
        previousWasSend = false
        return try wearable.readLine(timeout: Self.replyTimeout)
    }

    public func finish() async throws -> [String] {
        let extra = wearable.drain(for: Self.quietPeriod)
        guard daemon.process.isRunning else { throw TestingError("workoutd exited during the replay:\n\(daemon.log)") }
        return extra.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
}
