import Foundation

/// A decoded line: the command (or why it could not be decoded) together with the `id` to echo.
///
/// Decoding never throws past this type: a line that is an object always yields its usable `id`,
/// so even a failure reply can be matched by the wearable.
public struct CommandLine: Sendable, Hashable {
    public var id: CommandID?
    public var command: Result<Command, ProtocolError>

    public init(id: CommandID?, command: Result<Command, ProtocolError>) {
        self.id = id
        self.command = command
    }
}

extension CommandLine: Decodable {
    private enum CodingKeys: String, CodingKey { case id }

    public init(from decoder: any Decoder) throws {
        // Throws only when the line is not an object: that is `malformed_json`, with no id to echo.
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var idError: ProtocolError?
        do {
            id = try container.decodeIfPresent(CommandID.self, forKey: .id)
        } catch {
            id = nil
            idError = ProtocolError(code: .invalidField, field: "id", message: "'id' must be a string or an integer.")
        }
        do {
            let decoded = try Command(from: decoder)
            command = idError.map { .failure($0) } ?? .success(decoded)
        } catch {
            command = .failure(ProtocolError(decoding: error))
        }
    }
}

/// Turns one framed line into a ``CommandLine``, or the error reply for a line that is not an object.
///
/// A line that is a flat object (every command is) is decoded by ``FlatJSONDecoder``, a fraction of the
/// cost of `JSONDecoder`; any other line, malformed ones included, goes to `JSONDecoder`, so its
/// acceptance and errors are Foundation's. Holds its own `JSONDecoder`; not thread-safe, so each device
/// pipeline owns one.
public struct CommandLineDecoder {
    private let decoder = JSONDecoder()

    public init() {}

    public func decode(_ bytes: some Collection<UInt8>) -> CommandLine {
        let fast = bytes.withContiguousStorageIfAvailable(decodeFlat) ?? Array(bytes).withUnsafeBufferPointer(decodeFlat)
        if let fast { return fast }
        let data = Data(bytes)
        // Checked first: the JSON parser lets invalid bytes through inside strings it never converts.
        guard String(validating: data, as: UTF8.self) != nil else {
            return CommandLine(id: nil, command: .failure(ProtocolError(
                code: .malformedJSON, message: "The line is not valid UTF-8; commands must be UTF-8 JSON.")))
        }
        do {
            return try decoder.decode(CommandLine.self, from: data)
        } catch {
            return CommandLine(id: nil, command: .failure(ProtocolError(decoding: error)))
        }
    }

    /// Nil when the line is not valid UTF-8 or not a flat object (see ``FlatJSONObject``).
    private func decodeFlat(_ bytes: UnsafeBufferPointer<UInt8>) -> CommandLine? {
        guard String(validating: bytes, as: UTF8.self) != nil, let object = FlatJSONObject(parsing: bytes) else {
            return nil
        }
        do {
            return try CommandLine(from: FlatJSONDecoder(object))
        } catch {
            return CommandLine(id: nil, command: .failure(ProtocolError(decoding: error)))
        }
    }
}

/// Encodes replies as compact single-line JSON, newline included.
///
/// Keys come in the order `Reply.encode(to:)` writes them, `"status"` first, so a reply is byte-for-byte
/// repeatable (replays and transcripts compare whole lines) without sorting every object.
public struct ReplyEncoder {
    private let encoder = OrderedJSONEncoder()

    public init() {}

    public func encodeLine(_ reply: Reply) -> [UInt8] {
        var bytes: [UInt8]
        do {
            bytes = try encoder.encode(reply)
        } catch {
            // Only a non-finite duration could fail to encode; a clock that produces one is a bug, not input.
            bytes = Array(#"{"status":"error","error":{"code":"malformed_json","message":"The reply could not be encoded."}}"#.utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
