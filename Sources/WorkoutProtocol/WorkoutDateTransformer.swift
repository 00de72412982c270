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
        if let date = Self.parse(input) { return date }
        let codingPath = codingPath()
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath,
            debugDescription: "'\(codingPath.dottedPath)' must be a date like 2020-03-16 19:45:13 +0000 or 2020-03-16T19:45:13Z; got '\(input.truncatedForMessage)'."
        ))
    }

    public func encode(_ value: Date) throws -> String {
        Self.formatters.withLock { $0.wire.string(from: value) }
    }

    public static func parse(_ text: String) -> Date? {
        // The wearable's own form is read without ICU; the formatters decide everything else.
        if let date = WireDateParser.parse(text) { return date }
        return formatters.withLock { f in
            f.wire.date(from: text) ?? f.iso.date(from: text) ?? f.isoFractional.date(from: text)
        }
    }

    /// Foundation's formatters are not thread-safe; one locked set is cheaper than building them per line.
    private struct Formatters: @unchecked Sendable {
        let wire: DateFormatter
        let iso: ISO8601DateFormatter
        let isoFractional: ISO8601DateFormatter
    }

    private static let formatters: Mutex<Formatters> = {
        let wire = DateFormatter()
        wire.locale = Locale(identifier: "en_US_POSIX")
        wire.calendar = Calendar(identifier: .gregorian)
        wire.timeZone = TimeZone(secondsFromGMT: 0)
        wire.dateFormat = wireFormat
        wire.isLenient = false
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime]
        let isoFractional = ISO8601DateFormatter()
        isoFractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return Mutex(Formatters(wire: wire, iso: iso, isoFractional: isoFractional))
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

extension String {
    /// Echoing a 4 KiB value back in an error message helps nobody.
    var truncatedForMessage: String {
        count <= 64 ? self : String(prefix(61)) + "..."
    }
}
