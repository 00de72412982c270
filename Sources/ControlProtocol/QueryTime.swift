import Foundation

/// A time given on a command line or in a query: ISO 8601 with a zone.
///
/// As `/api/workouts` takes `since` and `until`: `2026-11-28T07:50:15Z`, with fractional seconds or an offset (`+01:00`), and the tables' own form
/// `2026-11-28 07:50:15Z`, so a time copied from a table can be given back.
public enum QueryTime {
    public static func parse(_ text: String) -> Date? {
        let normalized =
            text.count > 10 && text[text.index(text.startIndex, offsetBy: 10)] == " "
            ? text.prefix(10) + "T" + text.dropFirst(11) : Substring(text)
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: String(normalized)) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: String(normalized))
    }
}
