import Foundation
import StrictJSON

/// A decoded line: the command (or why it could not be decoded) together with the `id` to echo.
///
/// Decoding never throws past this type: a line that is an object always yields its usable `id`,
/// so even a failure reply can be matched by the wearable.
public struct DecodedLine: Sendable, Hashable {
    public var id: CommandID?
    public var command: Result<Command, ProtocolError>
    /// How the line ended on the wire, so its reply can end the same way.
    public var lineEnding: LineEnding

    public init(id: CommandID?, command: Result<Command, ProtocolError>, lineEnding: LineEnding = .lf) {
        self.id = id
        self.command = command
        self.lineEnding = lineEnding
    }

    /// The command's type; nil for a line that did not decode.
    public var commandType: CommandType? {
        if case .success(let command) = command { command.type } else { nil }
    }
}

extension DecodedLine: Decodable {
    private enum CodingKeys: String, CodingKey { case id }

    public init(from decoder: any Decoder) throws {
        // Throws only when the line is not an object: that is `malformed_json`, with no id to echo.
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id: Result<CommandID?, ProtocolError>
        do {
            id = Self.checked(try container.decodeIfPresent(CommandID.self, forKey: .id))
        } catch {
            id = .failure(Self.unusableID)
        }
        self.init(
            id: id,
            found: { path in (try? FoundValue(from: decoder))?.value(at: path) },
            decodingCommand: { try Command(from: decoder) }
        )
    }

    static let unusableID = ProtocolError(
        code: .invalidField,
        field: "id",
        message: "'id' must be a string or an integer."
    )

    /// The id of a command line, or why the hub will not store and echo it.
    ///
    /// Both decoding paths check here. A refused id is not echoed: its error reply has no `id` at all, as for an id of
    /// the wrong type.
    static func checked(_ id: CommandID?) -> Result<CommandID?, ProtocolError> {
        guard case .string(let text)? = id, let problem = CommandID.problem(with: text) else { return .success(id) }
        return .failure(ProtocolError(code: .invalidField, field: "id", message: problem))
    }

    /// The line from its `id` (or why it is unusable) and its command.
    ///
    /// The command is decoded even when the id is unusable, so that a bad command is reported the same way; an unusable
    /// id is the error otherwise. `found` gives the line's value at a key path, for the error to quote.
    init(
        id: Result<CommandID?, ProtocolError>,
        found: ([any CodingKey]) -> FoundValue?,
        decodingCommand: () throws -> Command
    ) {
        let decoded = Result { try decodingCommand() }.mapError { ProtocolError(decoding: $0, found: found) }
        lineEnding = .lf
        switch id {
        case .success(let value):
            self.id = value
            command = decoded
        case .failure(let error):
            self.id = nil
            command = decoded.flatMap { _ in .failure(error) }
        }
    }
}

/// Turns one framed line into a ``DecodedLine``, or the error reply for a line that is not an object.
///
/// Every line is checked to be exactly JSON by ``StrictJSONValidator`` (UTF-8 included), and nothing else reads
/// a line that is not; an ASCII line that parses as a flat object is JSON by construction and skips the check.
/// A line that is a flat object (every command is) is decoded by ``FlatJSONDecoder``, a fraction of the cost of
/// `JSONDecoder`; any other (valid) line goes to `JSONDecoder`.
/// Holds its own `JSONDecoder`; not thread-safe, so each device pipeline owns one.
public struct CommandLineDecoder {
    private let decoder = JSONDecoder()

    public init() {}

    public func decode(_ bytes: some Collection<UInt8>) -> DecodedLine {
        bytes.withContiguousStorageIfAvailable { decode(UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { decode($0) }
    }

    /// The same for bytes in place, as a read buffer holds them.
    ///
    /// Called from another module, the generic one above runs unspecialized, each step of its walk a protocol call.
    public func decode(_ bytes: UnsafeRawBufferPointer) -> DecodedLine {
        decodeChecked(bytes.assumingMemoryBound(to: UInt8.self)) ?? decodeNested(Data(bytes))
    }

    /// Valid JSON that is not flat, through `Codable`.
    private func decodeNested(_ bytes: Data) -> DecodedLine {
        do {
            return try decoder.decode(DecodedLine.self, from: bytes)
        } catch {
            return DecodedLine(id: nil, command: .failure(ProtocolError(decoding: error)))
        }
    }

    /// The reply for a line that is not JSON, or the decoded flat object.
    ///
    /// Nil for valid JSON that is not flat.
    private func decodeChecked(_ bytes: UnsafeBufferPointer<UInt8>) -> DecodedLine? {
        // The flat parse first: an ASCII line it accepts is already known to be JSON (see
        // `FlatJSONObject.isASCII`), which spares every command the validator's pass over its bytes.
        let flat = FlatJSONObject(parsing: bytes)
        if flat?.isASCII != true, let error = StrictJSONValidator.validate(bytes) {
            return DecodedLine(id: nil, command: .failure(.malformedJSON(error)))
        }
        guard let object = flat else { return nil }
        // The envelope's `id` straight from the parsed object (what `DecodedLine.init(from:)` reads through a
        // container of its own); the command too when it is well formed, through `Codable` otherwise.
        let id: Result<CommandID?, ProtocolError>
        switch object.parsed("id") {
        case nil, .null?: id = .success(nil)
        case let raw?:
            id = CommandID(flatValue: object.value(raw)).map(DecodedLine.checked) ?? .failure(DecodedLine.unusableID)
        }
        return DecodedLine(
            id: id,
            found: { path in path.count == 1 ? object[path[0].stringValue].map(FoundValue.init) : nil },
            decodingCommand: { try Command(wellFormed: object) ?? Command(from: FlatJSONDecoder(object)) }
        )
    }
}

/// Encodes replies as compact single-line JSON, newline included.
///
/// Keys come in the order `Reply.encode(to:)` writes them, `"status"` first, so a reply is byte-for-byte
/// repeatable (replays and transcripts compare whole lines) without sorting every object.
///
/// A reply is written once per command, so the line is written field by field rather than through the
/// generic `Encoder` machinery, which costs an allocation per container and per key path. `Reply`'s
/// `Codable` conformance stays the specification: ``encodeLineThroughCodable(_:)`` writes the same reply
/// through ``OrderedJSONEncoder``, and the tests hold the two byte-for-byte equal.
public struct ReplyEncoder: Sendable {
    private static let unencodable = Array(
        #"{"status":"error","error":{"code":"malformed_json","message":"The reply could not be encoded."}}"#.utf8
    )

    public init() {}

    public func encodeLine(_ reply: Reply) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        appendLine(reply, to: &bytes)
        return bytes
    }

    /// Appends `reply` and its newline to `bytes`.
    public func appendLine(_ reply: Reply, to bytes: inout [UInt8]) {
        switch reply.outcome {
        case .ok(let ack):
            if case .workoutEnded(_, let duration) = ack, !duration.isFinite {
                // Only a clock that produced a non-finite duration gets here: a bug, not input.
                bytes.append(contentsOf: Self.unencodable)
                break
            }
            JSONText.appendLiteral(#"{"status":"ok","command_type":"#, to: &bytes)
            JSONText.appendString(ack.commandType.rawValue, to: &bytes)
            appendID(reply.id, to: &bytes)
            switch ack {
            case .workoutStarted(let workoutID):
                appendMember(#","workout_id":"#, workoutID, to: &bytes)
            case .workoutEnded(let workoutID, let duration):
                appendMember(#","workout_id":"#, workoutID, to: &bytes)
                JSONText.appendLiteral(#","duration_seconds":"#, to: &bytes)
                JSONText.appendFiniteDouble(duration, to: &bytes)
            case .workoutShared(let workoutID, let service, let shareID):
                appendMember(#","workout_id":"#, workoutID, to: &bytes)
                JSONText.appendLiteral(#","service":"#, to: &bytes)
                JSONText.appendString(service.rawValue, to: &bytes)
                appendMember(#","share_id":"#, shareID, to: &bytes)
            }
            appendReplayedAndClose(reply.replayed, to: &bytes)
        case .error(let error):
            JSONText.appendLiteral(#"{"status":"error""#, to: &bytes)
            appendID(reply.id, to: &bytes)
            JSONText.appendLiteral(#","error":{"code":"#, to: &bytes)
            JSONText.appendString(error.code.rawValue, to: &bytes)
            if let field = error.field {
                JSONText.appendLiteral(#","field":"#, to: &bytes)
                JSONText.appendString(field, to: &bytes)
            }
            if let retryAfter = error.retryAfterMilliseconds {
                appendMember(#","retry_after_ms":"#, retryAfter, to: &bytes)
            }
            JSONText.appendLiteral(#","message":"#, to: &bytes)
            JSONText.appendString(error.message, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
            appendReplayedAndClose(reply.replayed, to: &bytes)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The same line written through `Reply`'s `Codable` conformance.
    ///
    /// The reference the direct writer matches.
    public func encodeLineThroughCodable(_ reply: Reply) -> [UInt8] {
        var bytes = (try? OrderedJSONEncoder().encode(reply)) ?? Self.unencodable
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private func appendID(_ id: CommandID?, to bytes: inout [UInt8]) {
        switch id {
        case nil: return
        case .integer(let value): appendMember(#","id":"#, value, to: &bytes)
        case .string(let value):
            JSONText.appendLiteral(#","id":"#, to: &bytes)
            JSONText.appendString(value, to: &bytes)
        }
    }

    private func appendMember(_ key: StaticString, _ value: Int64, to bytes: inout [UInt8]) {
        JSONText.appendLiteral(key, to: &bytes)
        JSONText.appendInteger(value, to: &bytes)
    }

    private func appendReplayedAndClose(_ replayed: Bool, to bytes: inout [UInt8]) {
        if replayed { JSONText.appendLiteral(#","replayed":true"#, to: &bytes) }
        bytes.append(UInt8(ascii: "}"))
    }
}
