import Foundation
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// A hub's clocks as a test drives them.
///
/// The wall clock steps (NTP, `date -s`) independently of the boot clock, which only moves forward, and synchronisation
/// is switched on when the test says.
public final class SteppedClock: Sendable {
    private struct State {
        var wall: Date
        var boot: Double
        var bootID: String
        var synchronized: Bool
    }

    private let state: Mutex<State>

    public init(
        wall: Date = Date(timeIntervalSince1970: 1_700_000_000),
        boot: Double = 100,
        synchronized: Bool = false,
        bootID: String = "boot-1"
    ) {
        state = Mutex(State(wall: wall, boot: boot, bootID: bootID, synchronized: synchronized))
    }

    public var workoutClock: WorkoutClock {
        WorkoutClock { [self] in
            state.withLock {
                ClockReading(
                    wall: $0.wall,
                    boot: BootInstant(bootID: $0.bootID, seconds: $0.boot),
                    synchronized: $0.synchronized
                )
            }
        }
    }

    public var reading: ClockReading { workoutClock.read() }

    /// Time passes: both clocks move by `seconds`.
    public func pass(_ seconds: Double) {
        state.withLock {
            $0.wall += seconds
            $0.boot += seconds
        }
    }

    /// The wall clock is set (stepped) by `seconds`, forward or back; the boot clock does not move.
    public func step(wallBy seconds: Double, synchronized: Bool? = nil) {
        state.withLock {
            $0.wall += seconds
            if let synchronized { $0.synchronized = synchronized }
        }
    }

    /// The hub reboots: a new boot id, the boot clock from near zero, the wall clock where it was.
    public func reboot(as bootID: String) {
        state.withLock {
            $0.bootID = bootID
            $0.boot = 5
        }
    }
}
