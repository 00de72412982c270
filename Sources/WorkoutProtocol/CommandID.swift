import StrictJSON

/// The optional `id` a wearable attaches to a command so it can match the reply.
///
/// The reply echoes it verbatim, so a string stays a string and an integer stays an integer.
/// A command line's string id is at most ``maximumStringBytes`` bytes of printable text (checked where a
/// command line is decoded, not here: replies stored by older versions must still decode); an integer id is an
/// `Int64`, at most 20 characters of JSON.
public enum CommandID: Hashable, Sendable, Codable, CustomStringConvertible {
    case string(String)
    case integer(Int64)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Integer first: JSON `7` must stay an integer, and a fractional number must not be truncated into one.
        if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            throw DecodingError.typeMismatch(
                CommandID.self,
                .init(codingPath: decoder.codingPath, debugDescription: "'id' must be a string or an integer.")
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        }
    }

    public var description: String {
        switch self {
        case .string(let value): value
        case .integer(let value): String(value)
        }
    }
}

extension CommandID {
    /// The id as the JSON text it is on the wire: `7` or `"7"`, so the two stay different ids.
    public var jsonText: String {
        switch self {
        case .integer(let value):
            // JSON's integer is Swift's decimal spelling; up to 15 digits the String needs no storage of its own.
            return String(value)
        case .string(let value):
            var bytes: [UInt8] = []
            // The quotes and the text, escaped only where a wearable sent a control character, quote or backslash.
            bytes.reserveCapacity(value.utf8.count + 2)
            JSONText.appendString(value, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension CommandID {
    /// The longest string id a command may carry, in bytes of UTF-8.
    ///
    /// It is stored with every reply kept for replay and shown in the event stream.
    public static let maximumStringBytes = 128

    /// Why a command line's string id cannot be stored and echoed, as the reply's message; nil when it can.
    static func problem(with text: String) -> String? {
        if text.utf8.count > maximumStringBytes {
            return "'id' must be at most \(maximumStringBytes) bytes of UTF-8; got \(text.utf8.count)."
        }
        return UntrustedText.firstForbidden(in: text).map { $0.message(field: "id") }
    }
}
