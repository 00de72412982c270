import Logging
import ServiceLifecycle
import WorkoutEngine
import WorkoutStorage

/// Waits for the system clock to be synchronised, then corrects the workouts timed before.
///
/// The correction is ``SQLiteWorkoutStore/correctClockMarks(from:)``. Until then it says, once, that times are being
/// marked. A correction that fails (storage unavailable) is tried again at the next check.
///
/// The correction runs twice, the second time one ``period`` after the first: a command whose times were taken
/// just before the clock was synchronised may commit just after the first pass (a group commit waits for its
/// batch), and would otherwise keep its mark for good. Correcting is idempotent: the second pass changes only
/// such stragglers.
final class ClockCorrection: Service, Sendable, CustomStringConvertible {
    /// How often the clock's state is looked at while it is not synchronised. A correction within half a minute of
    /// NTP's first step is soon enough, and a hub that never synchronises (no network) wakes for it only this
    /// often: a shorter period took a large share of the idle wakeup budget.
    static let period = Duration.seconds(30)

    private let clock: WorkoutClock
    private let store: SQLiteWorkoutStore
    private let logger: Logger

    var description: String { "ClockCorrection" }

    init(clock: WorkoutClock, store: SQLiteWorkoutStore, logger: Logger) {
        self.clock = clock
        self.store = store
        self.logger = logger
    }

    /// Runs until shutdown, checking the clock every ``period`` until both corrections are done.
    ///
    /// Then it only sleeps: a service that returns early stops the daemon's service group.
    func run() async throws {
        try? await cancelWhenGracefulShutdown { [self] in
            var announced = false
            var passesLeft = 2
            while !Task.isCancelled {
                if passesLeft > 0 {
                    let reading = clock.read()
                    if reading.synchronized {
                        do {
                            let corrected = try await store.correctClockMarks(from: reading)
                            // The first pass always speaks once times were marked; the second only when it found stragglers.
                            if corrected > 0 || (announced && passesLeft == 2) {
                                logger.notice(
                                    "system clock synchronised: times taken before it corrected from the boot-time clock",
                                    metadata: [
                                        "workouts": "\(corrected)"
                                    ]
                                )
                            }
                            passesLeft -= 1
                        } catch {
                            logger.warning(
                                "clock correction could not be stored; retrying",
                                metadata: ["reason": "\(error)"]
                            )
                        }
                    } else if !announced {
                        announced = true
                        logger.notice(
                            "system clock not synchronised: workouts are timed on the boot-time clock and their times marked until it is"
                        )
                    }
                }
                try await Task.sleep(for: passesLeft == 0 ? .seconds(3600) : Self.period)
            }
        }
    }
}
