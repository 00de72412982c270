import NIOCore
import Synchronization

/// Gives memory back to the kernel as traffic comes and goes, with no timer at idle.
///
/// A burst of commands faults in the code the command path runs (and, by fault-around, its neighbours): a few MiB
/// that would stay resident through hours of idle. Once the daemon has seen no engine event for `quiet`, this gives
/// the code pages back again (``StartupCodeRelease``) and trims the allocator (``AllocatorTrim``). While commands
/// keep flowing it trims the allocator every `trimEvery` quiet periods (a minute), since what hours of traffic free
/// between blocks still in use stays resident otherwise. One timer per quiet period while traffic flows, none at
/// idle: the timer is armed by the first event after a release and re-armed only while events keep coming.
final class MemoryRelease: Sendable {
    private struct State {
        var armed = false
        var activeSinceArmed = false
        /// Busy periods since the allocator was last trimmed.
        var busyPeriods = 0
    }

    private let state = Mutex(State())
    /// `armed && activeSinceArmed`, readable without the lock.
    ///
    /// Then an event has nothing to change (the common case while commands flow, once per batch).
    private let noted = Atomic<Bool>(false)
    private let loop: any EventLoop
    private let quiet: TimeAmount
    private let trimEvery: Int

    init(loop: any EventLoop, quiet: TimeAmount = .seconds(10), trimEvery: Int = 6) {
        self.loop = loop
        self.quiet = quiet
        self.trimEvery = trimEvery
    }

    /// Called for every batch of engine events.
    ///
    /// An atomic load while commands flow; arms the timer when none is pending.
    func noteActivity() {
        guard !noted.load(ordering: .relaxed) else { return }
        let arm = state.withLock { state -> Bool in
            state.activeSinceArmed = true
            if state.armed { noted.store(true, ordering: .relaxed) }
            guard !state.armed else { return false }
            state.armed = true
            state.activeSinceArmed = false
            return true
        }
        if arm { schedule() }
    }

    private func schedule() {
        loop.scheduleTask(in: quiet) { [self] in fire() }
    }

    private func fire() {
        let (busy, trim) = state.withLock { state -> (Bool, Bool) in
            noted.store(false, ordering: .relaxed)
            if state.activeSinceArmed {
                state.activeSinceArmed = false
                state.busyPeriods += 1
                guard state.busyPeriods >= trimEvery else { return (true, false) }
                state.busyPeriods = 0
                return (true, true)
            }
            state.armed = false
            state.busyPeriods = 0
            return (false, true)
        }
        if busy { schedule() } else { StartupCodeRelease.release() }
        if trim { AllocatorTrim.trim() }
    }
}
