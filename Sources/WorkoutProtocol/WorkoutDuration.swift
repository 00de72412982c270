import Foundation

/// The one rounding and the one text of a workout's duration, used by every view.
///
/// Replies, workoutctl, `workoutd workouts`, JSON and tables all use it, so a workout never reads `0.006` in one and
/// `0.000` in another.
public enum WorkoutDuration {
    /// Whole milliseconds: finer digits are clock noise, and they make replies hard to read.
    public static func seconds(from start: Date, to end: Date) -> Double {
        (end.timeIntervalSince(start) * 1000).rounded() / 1000
    }

    /// `0.006`, `75.250`: seconds with the millisecond digits the value has.
    public static func text(_ seconds: Double) -> String {
        String(format: "%.3f", seconds)
    }
}
