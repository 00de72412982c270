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
    private let loop: any EventLoop
    private let quiet: TimeAmount

    init(loop: any EventLoop, quiet: TimeAmount = .seconds(10)) {
        self.loop = loop
        self.quiet = quiet
    }

    /// Called for every engine event: cheap (one uncontended lock), arms the timer when none is pending.
    func noteActivity() {
        let arm = state.withLock { state -> Bool in
            state.activeSinceArmed = true
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
