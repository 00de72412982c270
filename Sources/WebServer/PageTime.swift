import Foundation

/// Times and durations as the page shows them.
///
/// In the hub's time zone, one short format (`2026-11-28 08:52`), and durations as people say them (`45 s`, `12 min`,
/// `1 h 02 min`). `app.js` writes the same forms.
enum PageTime {
    /// The hub's calendar: its time zone, weeks from Monday (ISO 8601), for "today" and "this week".
    static func calendar(timeZone: TimeZone = .current) -> Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        return calendar
    }

    static func format(_ date: Date, timeZone: TimeZone = .current) -> String {
        let parts = calendar(timeZone: timeZone).dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute))"
    }

    /// `45 s`, `12 min`, `1 h 02 min`: whole units, rounded down.
    static func spoken(seconds: Double) -> String {
        let total = max(0, Int(seconds))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min" }
        return "\(total / 3600) h " + String(format: "%02d", total % 3600 / 60) + " min"
    }
}
