import Foundation
import Synchronization

/// Dates on the wire: `yyyy-MM-dd HH:mm:ss Z` (the wearable's form), with ISO 8601 accepted too.
///
/// The formats are fixed to `en_US_POSIX` so the user's locale and calendar never change what parses.
/// Encoding always writes the wearable's form in UTC.
public struct WorkoutDateTransformer: CodingContainerTransformer {
    public static let wireFormat = "yyyy-MM-dd HH:mm:ss Z"

    public init() {}

    public func decode(input: String, codingPath: @autoclosure () -> [any CodingKey]) throws -> Date {
        var reason: String?
        switch WireDateParser.read(input) {
        case .date(let date): return date
        case .impossible(let why): reason = why
        case .unrecognized: if let date = Self.formatted(input) { return date }
        }
        let codingPath = codingPath()
        let because = reason.map { " (\($0))" } ?? ""
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: codingPath,
                debugDescription:
                    "'\(codingPath.dottedPath)' must be a date like 2020-03-16 19:45:13 +0000 or 2020-03-16T19:45:13Z; got '\(input.truncatedForMessage)'\(because)."
            )
        )
    }

    public func encode(_ value: Date) throws -> String {
        Self.formatters.withLock { $0.wire.string(from: value) }
    }

    public static func parse(_ text: String) -> Date? {
        switch WireDateParser.read(text) {
        case .date(let date): date
        case .impossible: nil
        case .unrecognized: formatted(text)
        }
    }

    /// Text in neither form `WireDateParser` reads whole.
    ///
    /// Only the wearable's form through the non-lenient formatter (ISO 8601 text is all read there, so ISO's formatter,
    /// which moves impossible dates, is not asked).
    private static func formatted(_ text: String) -> Date? {
        formatters.withLock { $0.wire.date(from: text) }
    }

    /// Foundation's formatters are not thread-safe; one locked set is cheaper than building them per line.
    private struct Formatters: @unchecked Sendable {
        let wire: DateFormatter
    }

    private static let formatters: Mutex<Formatters> = {
        let wire = DateFormatter()
        wire.locale = Locale(identifier: "en_US_POSIX")
        wire.calendar = Calendar(identifier: .gregorian)
        wire.timeZone = TimeZone(secondsFromGMT: 0)
        wire.dateFormat = wireFormat
        wire.isLenient = false
        return Mutex(Formatters(wire: wire))
    }()
}

extension Array where Element == any CodingKey {
    /// `a.b[2]` style path used in the reply's `field`.
    public var dottedPath: String {
        var path = ""
        for key in self {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return path
    }
}
