import Foundation
import WorkoutProtocol

/// Workouts as CSV, the same from the HTTP API (`/api/workouts.csv`) and `workoutctl workouts --csv`.
///
/// RFC 4180: CRLF line ends, a header row, fields quoted when they hold a comma, quote or line break.
///
/// Every field comes from a wearable or a person, and a spreadsheet runs a cell that starts with `=`, `+`, `-`
/// or `@` as a formula (CSV injection): such a cell, and one that starts with a tab or carriage return, gets a
/// leading `'`, as OWASP advises, so it is shown as the text it is.
public struct WorkoutCSV: Sendable {
    public static let header = [
        "id", "device", "device_name", "location", "intensity_level", "started_at", "ended_at", "duration_seconds",
        "wearable_date",
    ]
    public static let contentType = "text/csv; charset=utf-8; header=present"

    /// Times are written in this zone with their offset (ISO 8601), e.g. `2026-11-28T08:52:36+01:00`.
    public var timeZone: TimeZone

    public init(timeZone: TimeZone = .current) {
        self.timeZone = timeZone
    }

    /// The header row and one row per workout.
    public func document(_ workouts: [WorkoutRecord]) -> String {
        headerLine() + rows(workouts)
    }

    public func headerLine() -> String {
        Self.line(Self.header)
    }

    /// One line per workout, each ending in CRLF.
    public func rows(_ workouts: [WorkoutRecord]) -> String {
        var text = ""
        for workout in workouts {
            text += Self.line([
                String(workout.id), workout.device.rawValue, workout.deviceName ?? "", workout.location,
                String(workout.intensityLevel), time(workout.startedAt), workout.endedAt.map(time) ?? "",
                workout.durationSeconds.map(WorkoutDuration.text) ?? "", time(workout.date),
            ])
        }
        return text
    }

    /// A time as the documents write it: ISO 8601 in ``timeZone``, with its offset.
    public func time(_ date: Date) -> String {
        var style = Date.ISO8601FormatStyle(timeZone: timeZone)
        style = style.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .colon)
        return date.formatted(style)
    }

    /// One row of any CSV document, each field escaped as ``field(_:)`` does, ending in CRLF.
    public static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// One field: neutralised when a spreadsheet would take it for a formula, quoted when it must be.
    static func field(_ value: String) -> String {
        var text = value
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
