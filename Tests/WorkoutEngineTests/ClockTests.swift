import Foundation
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

/// Durations on the boot-time clock, marks on times taken before the clock was synchronised.
@Suite("Clocks")
struct ClockTests {
    static func line(_ text: String) -> DecodedLine { CommandLineDecoder().decode(Array(text.utf8)) }
    static let start = line(CommandLines.start())
    static let end = line(CommandLines.end())

    /// Starts a workout, lets `before` happen, ends it.
    ///
    /// Returns the reply's duration and the stored workout.
    func workout(
        on clock: SteppedClock,
        store: InMemoryWorkoutStore = InMemoryWorkoutStore(),
        _ during: (SteppedClock) -> Void
    ) async throws -> (duration: Double, stored: WorkoutRecord) {
        let engine = try await WorkoutEngine(store: store, clock: clock.workoutClock)
        let session = engine.session(for: "band")
        _ = await session.handle([Self.start])
        during(clock)
        let replies = await session.handle([Self.end])
        guard case .ok(.workoutEnded(_, let duration)) = replies[0].outcome else {
            Issue.record("end_workout failed: \(replies[0])")
            return (0, try #require(try await store.workouts(device: nil, limit: nil).first))
        }
        return (duration, try #require(try await store.workouts(device: nil, limit: nil).first))
    }

    @Test("a clock stepped back by an hour during a workout changes neither its length nor its sign")
    func steppedBack() async throws {
        let clock = SteppedClock(synchronized: true)
        let (duration, stored) = try await workout(on: clock) { clock in
            clock.pass(600)
            clock.step(wallBy: -3600)
            clock.pass(300)
        }
        #expect(duration == 900)
        #expect(stored.durationSeconds == 900)
        #expect(stored.endedAt == stored.startedAt.addingTimeInterval(900))
        #expect(stored.clockMark == nil)
    }

    @Test("a clock stepped forward by days during a workout does not lengthen it")
    func steppedForward() async throws {
        let clock = SteppedClock(synchronized: true)
        let (duration, _) = try await workout(on: clock) { clock in
            clock.pass(60)
            clock.step(wallBy: 3 * 86_400)
            clock.pass(60)
        }
        #expect(duration == 120)
    }

    @Test("a workout started before synchronisation and ended after it is marked corrected, its start recomputed")
    func spanningTheSynchronisation() async throws {
        // Boots at its last shutdown, a week behind; NTP steps it forward mid-workout.
        let real = Date(timeIntervalSince1970: 1_780_000_000)
        let clock = SteppedClock(wall: real.addingTimeInterval(-7 * 86_400), synchronized: false)
        let (duration, stored) = try await workout(on: clock) { clock in
            clock.pass(1200)
            clock.step(wallBy: 7 * 86_400, synchronized: true)
            clock.pass(600)
        }
        #expect(duration == 1800)
        #expect(stored.clockMark == .corrected)
        #expect(stored.endedAt == real.addingTimeInterval(1800))
        #expect(stored.startedAt == real)
    }

    @Test("a workout timed entirely before synchronisation is stored marked, then corrected from the boot clock")
    func beforeSynchronisation() async throws {
        let real = Date(timeIntervalSince1970: 1_780_000_000)
        let clock = SteppedClock(wall: Date(timeIntervalSince1970: 0), synchronized: false)
        let (duration, stored) = try await workout(on: clock) { $0.pass(45) }
        #expect(duration == 45)
        #expect(stored.clockMark == .unsynchronized)
        #expect(stored.startedAt == Date(timeIntervalSince1970: 0))
        #expect(stored.startedBoot?.seconds == 100 && stored.endedBoot?.seconds == 145)

        // Ten seconds after the end NTP sets the clock: the correction starts from the boot clock.
        clock.pass(10)
        clock.step(wallBy: real.timeIntervalSince1970 - 55, synchronized: true)
        var corrected = stored
        let didCorrect = corrected.correct(from: clock.reading)
        #expect(didCorrect)
        #expect(corrected.clockMark == .corrected)
        #expect(corrected.endedAt == real.addingTimeInterval(-10))
        #expect(corrected.startedAt == real.addingTimeInterval(-55))
        #expect(corrected.durationSeconds == 45)
        // Readings of another boot cannot correct it.
        clock.reboot(as: "boot-2")
        var other = stored
        let otherCorrected = other.correct(from: clock.reading)
        #expect(!otherCorrected)
        #expect(other == stored)
    }

    @Test("without a boot clock of the same boot, a clock stepped back gives no negative duration and marks the times")
    func rebootDuringWorkout() async throws {
        let store = InMemoryWorkoutStore()
        let clock = SteppedClock(synchronized: true)
        let engine = try await WorkoutEngine(store: store, clock: clock.workoutClock)
        _ = await engine.session(for: "band").handle([Self.start])
        clock.reboot(as: "boot-2")
        clock.step(wallBy: -86_400)
        // A new engine on the same store: the daemon after the reboot.
        let after = try await WorkoutEngine(store: store, clock: clock.workoutClock)
        let replies = await after.session(for: "band").handle([Self.end])
        guard case .ok(.workoutEnded(_, let duration)) = replies[0].outcome else {
            Issue.record("end_workout failed: \(replies[0])")
            return
        }
        #expect(duration >= 0)
        let stored = try #require(try await store.workouts(device: nil, limit: nil).first)
        #expect(stored.clockMark == .unsynchronized)
        #expect(stored.endedAt == stored.startedAt)
    }

    @Test("a wearable date far outside the plausible range is kept as given and flagged")
    func implausibleDates() {
        let started = Date(timeIntervalSince1970: 1_780_000_000)
        func record(_ date: Date, mark: WorkoutClockMark? = nil) -> WorkoutRecord {
            var record = WorkoutRecord(
                id: 1,
                device: "band",
                workout: Workout(location: "Gym", date: date, intensityLevel: 3),
                startedAt: started
            )
            record.clockMark = mark
            return record
        }
        #expect(record(started.addingTimeInterval(-3600)).dateIsPlausible)
        #expect(record(started.addingTimeInterval(-200 * 86_400)).dateIsPlausible)  // logged late
        #expect(!record(Date(timeIntervalSince1970: 0)).dateIsPlausible)  // an unset wearable clock
        #expect(!record(started.addingTimeInterval(30 * 86_400)).dateIsPlausible)  // the future
        // The hub's own clock unsynchronised: only the fixed bounds judge.
        #expect(record(started.addingTimeInterval(30 * 86_400), mark: .unsynchronized).dateIsPlausible)
        #expect(!record(Date(timeIntervalSince1970: 5_000_000_000), mark: .unsynchronized).dateIsPlausible)
        #expect(record(Date(timeIntervalSince1970: 0)).date == Date(timeIntervalSince1970: 0))
    }
}
