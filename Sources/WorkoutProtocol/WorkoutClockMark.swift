import Foundation

/// How far a workout's wall-clock times (`startedAt`, `endedAt`) can be trusted. Stored with the workout and
/// shipped in replication, so the central store can tell; `nil` on a record means the clock was synchronised.
public enum WorkoutClockMark: String, Hashable, Sendable, Codable {
    /// Taken before the system clock was synchronised: the times may be off by hours or years.
    ///
    /// A board without a real-time clock boots at its last shutdown, or in 1970, until NTP steps it.
    case unsynchronized
    /// Taken before the clock was synchronised, then recomputed from the boot-time clock once it was.
    ///
    /// The times are as good as the synchronised clock, the duration never depended on them.
    case corrected
}

/// A reading of `CLOCK_BOOTTIME`.
///
/// Seconds since the boot named by `bootID` (`/proc/sys/kernel/random/boot_id`), suspend included. Only readings of the
/// same boot can be subtracted; NTP steps never move them.
public struct BootInstant: Hashable, Sendable, Codable {
    public var bootID: String
    public var seconds: Double

    public init(bootID: String, seconds: Double) {
        self.bootID = bootID
        self.seconds = seconds
    }

    /// Seconds from `earlier` to this one, or nil when they belong to different boots.
    public func seconds(since earlier: BootInstant) -> Double? {
        bootID == earlier.bootID ? seconds - earlier.seconds : nil
    }
}

/// The range of wearable `date`s the hub believes. A wearable's clock may be unset (1970, 2000) or wrong by
/// years; such a `date` is stored as given and flagged, and nothing (durations included) is computed from it.
/// A date in the past after ``earliest`` is believed: a wearable may start logging a workout late.
public enum PlausibleWorkoutDate {
    /// Before this no wearable speaking this protocol existed.
    public static let earliest = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01T00:00:00Z
    /// How far ahead of the hub's synchronised clock at the start the wearable's date may be.
    ///
    /// Time zones wrongly applied, or a wearable's clock running fast.
    public static let maximumLead: TimeInterval = 2 * 86_400
    /// Without a synchronised clock the hub's time says nothing.
    ///
    /// Only a date this far past ``earliest`` is judged.
    public static let latestWithoutClock = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01T00:00:00Z

    /// Whether `date` is plausible for a workout started at `startedAt` (on a clock trusted or not).
    public static func contains(_ date: Date, startedAt: Date, clockTrusted: Bool) -> Bool {
        guard date >= earliest else { return false }
        return clockTrusted ? date.timeIntervalSince(startedAt) <= maximumLead : date < latestWithoutClock
    }
}
