/// What a device transcript (Tests/Transcripts) is replayed against.
///
/// Bytes go in as a wearable writes them, reply lines come back in order. One transcript runs the same way in process
/// (``InProcessTranscriptTarget``: the real device pipeline on a test channel) and live (``DaemonTranscriptTarget``:
/// workoutd as a process on a pty).
public protocol TranscriptTarget {
    /// A short name for test output: "in process", "live daemon".
    var name: String { get }
    /// Writes `bytes` as one write of the wearable (one read of the daemon).
    func send(_ bytes: [UInt8]) async throws
    /// The next reply line, without its LF (a CR before it, the answer to a CR-ended command, stays).
    func nextReply() async throws -> String
    /// Ends the session: the reply lines that came after every expected one (none, when all is well). Throws if
    /// the device path failed (the daemon exited).
    func finish() async throws -> [String]
    /// What helps to understand a failure: the daemon's log, or nothing.
    var diagnostics: String { get }
}

extension TranscriptTarget {
    public var diagnostics: String { "" }
}
