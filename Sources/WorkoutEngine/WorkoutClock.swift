import Foundation
import WorkoutProtocol

/// One reading of the hub's clocks, taken once per batch.
public struct ClockReading: Sendable, Hashable {
    /// The wall clock: what `startedAt`, `endedAt` and `queuedAt` show.
    public var wall: Date
    /// The boot-time clock, which NTP steps do not move.
    ///
    /// Nil from a clock without one (then durations fall back to the wall clock).
    public var boot: BootInstant?
    /// Whether the wall clock was synchronised (NTP) when read.
    public var synchronized: Bool

    public init(wall: Date, boot: BootInstant? = nil, synchronized: Bool = true) {
        self.wall = wall
        self.boot = boot
        self.synchronized = synchronized
    }
}

/// The engine's clock, injected so tests step the wall clock, the boot clock and synchronisation.
public struct WorkoutClock: Sendable {
    public var read: @Sendable () -> ClockReading

    public init(read: @escaping @Sendable () -> ClockReading) {
        self.read = read
    }

    /// A wall clock alone, trusted as synchronised: no boot time, so durations are wall-clock differences.
    public static func wall(_ now: @escaping @Sendable () -> Date) -> WorkoutClock {
        WorkoutClock { ClockReading(wall: now()) }
    }

    /// The system's clocks: `CLOCK_REALTIME`, `CLOCK_BOOTTIME` and the kernel's synchronisation state.
    public static func system(assumeSynchronized: Bool = false) -> WorkoutClock {
        let clock = SystemClock(assumeSynchronized: assumeSynchronized)
        return WorkoutClock { clock.read() }
    }
}
