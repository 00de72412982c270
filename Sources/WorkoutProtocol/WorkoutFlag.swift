import Foundation

/// What a reader should not take at face value in a workout.
///
/// The FLAGS column and the JSON `flags` array.
public enum WorkoutFlag: String, Hashable, Sendable, Codable, CaseIterable {
    /// The wearable's date is outside ``PlausibleWorkoutDate``.
    case dateImplausible = "date-implausible"
    /// The hub's times were taken before its clock was synchronised.
    case clockUnsynchronized = "clock-unsynchronized"
    /// They were, and were corrected from the boot-time clock since.
    case clockCorrected = "clock-corrected"
}

extension WorkoutRecord {
    /// The record's flags, in a fixed order; empty when everything can be taken as shown.
    public var flags: [WorkoutFlag] {
        var flags: [WorkoutFlag] = []
        if !dateIsPlausible { flags.append(.dateImplausible) }
        switch clockMark {
        case .unsynchronized?: flags.append(.clockUnsynchronized)
        case .corrected?: flags.append(.clockCorrected)
        case nil: break
        }
        return flags
    }
}
