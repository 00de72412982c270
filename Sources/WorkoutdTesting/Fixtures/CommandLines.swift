/// Command lines as a wearable writes them (without the line ending).
///
/// For tests that need a valid command rather than particular bytes. Protocol edge cases, malformed input and
/// transcripts keep their literal bytes.
///
///     wearable.request(CommandLines.start(id: 1))
///     CommandLines.start(id: "start-\(n)", location: "Pool", intensity: 3)
public enum CommandLines {
    /// The date the examples in the protocol documentation use, in the wearable's format.
    public static let date = "2020-03-16 19:45:13 +0000"

    /// A command's `id`, written as a JSON integer or string: `1` or `"start-1"`.
    public enum ID: Sendable, Hashable, ExpressibleByIntegerLiteral, ExpressibleByStringInterpolation {
        case integer(Int64)
        case string(String)

        public init(integerLiteral value: Int64) { self = .integer(value) }
        public init(stringLiteral value: String) { self = .string(value) }
        public init(_ value: Int) { self = .integer(Int64(value)) }

        var json: String {
            switch self {
            case .integer(let value): "\(value)"
            case .string(let value): CommandLines.quoted(value)
            }
        }
    }

    /// `start_workout`; the defaults are a valid workout.
    public static func start(
        id: ID? = nil,
        location: String = "Gym",
        date: String = CommandLines.date,
        intensity: Int = 5
    ) -> String {
        line(
            "start_workout",
            id: id,
            [("location", quoted(location)), ("date", quoted(date)), ("intensityLevel", "\(intensity)")]
        )
    }

    /// `end_workout`.
    public static func end(id: ID? = nil) -> String {
        line("end_workout", id: id, [])
    }

    /// `share_workout` to `service` (`twitter`, `facebook`, …).
    public static func share(id: ID? = nil, service: String = "twitter") -> String {
        line("share_workout", id: id, [("service", quoted(service))])
    }

    private static func line(_ type: String, id: ID?, _ members: [(String, String)]) -> String {
        let all = [("command_type", quoted(type))] + members + (id.map { [("id", $0.json)] } ?? [])
        return "{" + all.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// `text` as a JSON string, everything but quotes, backslashes and control characters as UTF-8.
    ///
    /// Those are escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
