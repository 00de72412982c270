import StrictJSON

/// A value a command line held where a key was read, as an error reply names it.
///
/// Replies quote what the wearable sent (`got a string ("5")`), so that a type error says what was wrong as well as
/// what was expected. The line is untrusted: a quoted string is cut short and escaped.
enum FoundValue: Decodable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    case object([String: FoundValue])
    case array([FoundValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String: FoundValue].self) {
            self = .object(value)
        } else {
            self = .array(try container.decode([FoundValue].self))
        }
    }

    init(_ value: FlatJSONObject.Value) {
        switch value {
        case .string(let text): self = .string(text)
        case .integer(let number): self = .integer(number)
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        }
    }

    /// The value at `path` inside this one; nil when there is none.
    func value(at path: [any CodingKey]) -> FoundValue? {
        var current = self
        for key in path {
            switch current {
            case .object(let members):
                guard let member = members[key.stringValue] else { return nil }
                current = member
            case .array(let elements):
                guard let index = key.intValue, elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// `a string ("5")`, `a number (5)`, `true`, `null`, `an object`.
    var description: String {
        switch self {
        case .string(let text): "a string (\"\(UntrustedText.escaped(text.truncatedForMessage, quoting: true))\")"
        case .integer(let number): "a number (\(number))"
        case .number(let number): "a number (\(number))"
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        case .object: "an object"
        case .array: "an array"
        }
    }
}
