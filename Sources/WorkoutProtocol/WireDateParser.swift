import Foundation

/// Reads the two date forms on the wire without a formatter.
///
/// The wearable's own `yyyy-MM-dd HH:mm:ss ±hhmm` and RFC 3339 / ISO 8601 `yyyy-MM-ddTHH:mm:ss[.fraction](Z|±hh:mm)`.
///
/// Every `start_workout` carries one; `DateFormatter` (ICU) costs more than the rest of the line's
/// decoding put together. Text in either form has every field range-checked as a calendar date (leap
/// years included) and a real UTC offset; an impossible one is refused with the reason, never moved to a
/// neighbouring date. Text in neither form is left to the wire formatter (non-lenient).
enum WireDateParser {
    enum Outcome: Equatable {
        case date(Date)
        /// The text has one of the forms but names no instant; the reason is for the reply.
        case impossible(String)
        case unrecognized
    }

    /// Years the proleptic Gregorian arithmetic below agrees with the formatter on.
    ///
    /// ICU switches to the Julian calendar before 1582.
    private static let years = 1900...9999

    static let notACalendarDate = "not a calendar date"
    static let badUTCOffset = "bad UTC offset"

    /// The date the UTF-8 text names, if it is in either form and a real instant.
    static func parse(_ utf8: UnsafeBufferPointer<UInt8>) -> Date? {
        if case .date(let date) = read(utf8: utf8) { return date }
        return nil
    }

    static func read(_ text: String) -> Outcome {
        var text = text
        return text.withUTF8 { read(utf8: $0) }
    }

    private static func read(utf8 b: UnsafeBufferPointer<UInt8>) -> Outcome {
        // 0123456789012345678901234
        // 2020-03-16 19:45:13 +0000
        // 2020-03-16T19:45:13[.123]Z / +01:00
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = number(b, 0, 4), let month = number(b, 5, 2), let day = number(b, 8, 2),
            let hour = number(b, 11, 2), let minute = number(b, 14, 2), let second = number(b, 17, 2)
        else { return .unrecognized }
        let offset: Int
        var fractionalSeconds = 0.0
        switch b[10] {
        case UInt8(ascii: " "):
            guard b.count == 25, b[19] == UInt8(ascii: " "), b[20] == UInt8(ascii: "+") || b[20] == UInt8(ascii: "-"),
                let offsetHours = number(b, 21, 2), let offsetMinutes = number(b, 23, 2)
            else { return .unrecognized }
            // Years the formatter reads by another calendar are left to it, as before.
            guard years.contains(year) else { return .unrecognized }
            guard offsetHours <= 14, offsetMinutes < 60 else { return .impossible(badUTCOffset) }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (b[20] == UInt8(ascii: "-") ? -1 : 1)
        case UInt8(ascii: "T"), UInt8(ascii: "t"):
            var i = 19
            if b[i] == UInt8(ascii: ".") {
                i += 1
                let fraction = i
                var scale = 0.1
                while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
                    fractionalSeconds += Double(b[i] - UInt8(ascii: "0")) * scale
                    scale /= 10
                    i += 1
                }
                guard i > fraction, i < b.count else { return .unrecognized }
            }
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                guard i + 1 == b.count else { return .unrecognized }
                offset = 0
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard i + 6 == b.count, b[i + 3] == UInt8(ascii: ":"),
                    let offsetHours = number(b, i + 1, 2), let offsetMinutes = number(b, i + 4, 2)
                else { return .unrecognized }
                guard offsetHours <= 14, offsetMinutes < 60 else { return .impossible(badUTCOffset) }
                offset = (offsetHours * 3600 + offsetMinutes * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            default:
                return .unrecognized
            }
        default:
            return .unrecognized
        }
        // RFC 3339 dates are proleptic Gregorian for every year from 0001.
        guard year >= 1, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return .impossible(notACalendarDate) }
        let seconds =
            daysSinceEpoch(year: year, month: month, day: day) * 86_400
            + hour * 3600 + minute * 60 + second - offset
        return .date(Date(timeIntervalSince1970: TimeInterval(seconds) + fractionalSeconds))
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
        let era = y / 400  // y >= 0 here, so no negative-era adjustment
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
