import WorkoutEngine
import WorkoutProtocol

/// The invariants a device's byte stream must never break, whatever it contains.
///
/// What the fuzzer asserts on every input and the corpus replay asserts on every seed.
///
/// The stream runs twice through fresh ``InMemoryDevice``s: in one read, and cut into reads of
/// pseudo-random sizes derived from its own bytes (so a finding reproduces from the input alone).
/// Both runs must give the same reply lines; their number must match ``FramingExpectation``
/// (one per non-blank line that fits, one `line_too_long` per oversized line, in order); each must pass
/// ``ReplyLineCheck``; a line's reply is `malformed_json` exactly when ``ReferenceJSONReader`` finds no
/// JSON object in it; and the session's remembered replies must stay within their capacity.
public enum StreamCheck {
    /// The checked outcome of one stream.
    public struct Outcome: Sendable {
        public var replies: [[UInt8]]
        public var expectation: FramingExpectation
    }

    public static func check(
        _ stream: [UInt8],
        maximumLineLength: Int = InMemoryDevice.defaultMaximumLineLength
    ) throws -> Outcome {
        let answered = FramingExpectation.answeredLines(in: stream, maximumLineLength: maximumLineLength)
        let expectation = FramingExpectation(
            replies: answered.count,
            tooLong: answered.count(where: { $0 == .tooLong })
        )

        let whole = try InMemoryDevice(maximumLineLength: maximumLineLength)
        let replies = try whole.receive(stream, cutAt: [])
        let pieces = try InMemoryDevice(maximumLineLength: maximumLineLength)
        let piecewise = try pieces.receive(stream, cutAt: cutPoints(for: stream))

        guard replies == piecewise else {
            throw StreamCheckFailure(
                "the stream cut into reads got other replies than the whole stream (\(piecewise.count) vs \(replies.count))"
            )
        }
        guard replies.count == expectation.replies else {
            throw StreamCheckFailure("expected \(expectation.replies) replies, got \(replies.count)")
        }
        for (number, (line, reply)) in zip(answered, replies).enumerated() {
            let code = try ReplyLineCheck.summary(of: reply).errorCode
            switch line {
            case .tooLong:
                guard code == .lineTooLong else {
                    throw StreamCheckFailure(
                        "answered line \(number + 1) is over the limit, but its reply is not line_too_long"
                    )
                }
            case .line(let bytes):
                // The oracle: the daemon calls a line malformed_json exactly when the plain reference reader
                // finds no JSON object in it.
                let verdict = ReferenceJSONReader.verdict(of: bytes)
                guard (verdict != .object) == (code == .malformedJSON) else {
                    throw StreamCheckFailure(
                        "answered line \(number + 1) is \(verdict) to the reference reader, but the daemon replied "
                            + "\(code?.rawValue ?? "ok"): \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)"
                    )
                }
            }
        }
        let remembered = whole.snapshot.recentReplies
        guard remembered.count <= remembered.capacity else {
            throw StreamCheckFailure(
                "the session remembers \(remembered.count) replies, over its capacity of \(remembered.capacity)"
            )
        }
        return Outcome(replies: replies, expectation: expectation)
    }

    /// Read boundaries 1–97 bytes apart, from a generator seeded with the stream's FNV-1a hash.
    static func cutPoints(for stream: [UInt8]) -> [Int] {
        var seed: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in stream { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var generator = SplitMix64(seed: seed)
        var cuts: [Int] = []
        var offset = 0
        while true {
            offset += 1 + Int(generator.next() % 97)
            guard offset < stream.count else { return cuts }
            cuts.append(offset)
        }
    }
}

/// A broken invariant, with a sentence saying which.
public struct StreamCheckFailure: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
