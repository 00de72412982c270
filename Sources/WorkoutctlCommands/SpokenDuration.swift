/// A duration as people say it, in its two largest units.
///
/// `6 ms`, `12 s`, `3 min 05 s`, `1 h 02 min`, `2 d 03 h`. Every smaller unit is cut off, not rounded, so a workout
/// just short of a minute never reads as one. The exact value is in `--json`.
public enum SpokenDuration {
    public static func text(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 1 { return "\(Int(seconds * 1000)) ms" }
        let whole = Int(seconds.rounded(.down))
        let (days, hours, minutes, rest) = (whole / 86_400, whole / 3600 % 24, whole / 60 % 60, whole % 60)
        if days > 0 { return "\(days) d \(twoDigits(hours)) h" }
        if hours > 0 { return "\(hours) h \(twoDigits(minutes)) min" }
        if minutes > 0 { return "\(minutes) min \(twoDigits(rest)) s" }
        return "\(rest) s"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
