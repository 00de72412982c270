import NIOCore
import Synchronization

/// A burst of commands faults in the code the command path runs (and, by fault-around, its neighbours): a few MiB
/// that would stay resident through hours of idle. Once the daemon has seen no engine event for `quiet`, this gives
/// the code pages back again (``StartupCodeRelease``). One timer per quiet period while traffic flows, none at
/// idle: the timer is armed by the first event after a release and re-armed only while events keep coming.
final class QuietCodeRelease: Sendable {
    private struct State {
        var armed = false
        var activeSinceArmed = false
    }

    private let state = Mutex(State())
    /// `armed && activeSinceArmed`, readable without the lock: then an event has nothing to change (the common
    /// case while commands flow, once per batch).
    private let noted = Atomic<Bool>(false)
    private let loop: any EventLoop
    private let quiet: TimeAmount

    init(loop: any EventLoop, quiet: TimeAmount = .seconds(10)) {
        self.loop = loop
        self.quiet = quiet
    }

    /// Called for every batch of engine events: an atomic load while commands flow; arms the timer when none is
    /// pending.
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
        let busy = state.withLock { state -> Bool in
            noted.store(false, ordering: .relaxed)
            if state.activeSinceArmed {
                state.activeSinceArmed = false
                return true
            }
            state.armed = false
            return false
        }
        if busy { schedule() } else { StartupCodeRelease.release() }
    }
}
