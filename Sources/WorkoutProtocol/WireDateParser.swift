import Foundation

/// Reads the wearable's own date form, `yyyy-MM-dd HH:mm:ss ±hhmm`, without a formatter.
///
/// Every `start_workout` carries one; `DateFormatter` (ICU) costs more than the rest of the line's
/// decoding put together. Only text that is exactly that form with every field in range is read here;
/// anything else returns nil and goes to the formatters, so what is accepted and rejected is unchanged.
enum WireDateParser {
    /// Years the proleptic Gregorian arithmetic below agrees with the formatter on (ICU switches to the
    /// Julian calendar before 1582).
    private static let years = 1900...9999

    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    private static func parse(utf8 b: UnsafeBufferPointer<UInt8>) -> Date? {
        // 0123456789012345678901234
        // 2020-03-16 19:45:13 +0000
        guard b.count == 25, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: " "),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: " "),
              b[20] == UInt8(ascii: "+") || b[20] == UInt8(ascii: "-"),
              let year = number(b, 0, 4), let month = number(b, 5, 2), let day = number(b, 8, 2),
              let hour = number(b, 11, 2), let minute = number(b, 14, 2), let second = number(b, 17, 2),
              let offsetHours = number(b, 21, 2), let offsetMinutes = number(b, 23, 2),
              years.contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60, offsetHours <= 14, offsetMinutes < 60
        else { return nil }
        let offset = (offsetHours * 3600 + offsetMinutes * 60) * (b[20] == UInt8(ascii: "-") ? -1 : 1)
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400
            + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The decimal number in `count` ASCII digits at `start`, or nil if any is not a digit.
    private static func number(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in b[start..<start + count] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400  // y >= 1899 here, so no negative-era adjustment
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
