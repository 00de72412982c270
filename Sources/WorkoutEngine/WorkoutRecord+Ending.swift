import Foundation
import WorkoutProtocol

extension WorkoutRecord {
    /// Ends the workout at `reading`, its duration measured on the boot-time clock when it can be.
    ///
    /// That is whenever both ends were read in the same boot, so an NTP step during the workout changes neither its
    /// length nor its sign.
    ///
    /// - Started before the clock was synchronised and ended after: the start is recomputed from the end and
    ///   the boot-clock duration (``WorkoutClockMark/corrected``).
    /// - Otherwise the start stands, and the end is the start plus that duration (a step during the workout moves
    ///   the wall clock, not the workout).
    /// - Without boot readings of one boot (a clock without one, or a reboot during the workout) the wall clock
    ///   is all there is: an end before the start is kept at the start and the times marked as untrusted.
    mutating func end(at reading: ClockReading) {
        endedBoot = reading.boot
        guard let start = startedBoot, let end = reading.boot, let elapsed = end.seconds(since: start) else {
            if reading.wall < startedAt, clockMark == nil { clockMark = .unsynchronized }
            endedAt = max(reading.wall, startedAt)
            return
        }
        let duration = max(0, elapsed)
        if clockMark == .unsynchronized, reading.synchronized {
            startedAt = reading.wall.addingTimeInterval(-duration)
            endedAt = reading.wall
            clockMark = .corrected
        } else {
            endedAt = startedAt.addingTimeInterval(duration)
        }
    }

    /// Recomputes the times of a workout taken before synchronisation from its boot-clock readings.
    ///
    /// It needs a synchronised `reading` of the same boot (see ``WorkoutClockMark/corrected``). Returns false, changing
    /// nothing, when it cannot (not marked, or readings of another boot).
    public mutating func correct(from reading: ClockReading) -> Bool {
        guard clockMark == .unsynchronized, reading.synchronized, let now = reading.boot, let start = startedBoot,
            let sinceStart = now.seconds(since: start)
        else { return false }
        let ended = endedBoot.flatMap { now.seconds(since: $0) }
        if endedAt != nil, ended == nil { return false }
        startedAt = reading.wall.addingTimeInterval(-sinceStart)
        if let ended { endedAt = reading.wall.addingTimeInterval(-ended) }
        clockMark = .corrected
        return true
    }
}
