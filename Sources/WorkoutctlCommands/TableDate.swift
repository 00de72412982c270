import Foundation

/// How record tables print a time: UTC, second precision, sortable: `2020-03-16 19:45:13Z`.
public enum TableDate {
    public static func format(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().dateSeparator(.dash).dateTimeSeparator(.space)
                .time(includingFractionalSeconds: false).timeSeparator(.colon).timeZone(separator: .omitted)
        )
    }
}
