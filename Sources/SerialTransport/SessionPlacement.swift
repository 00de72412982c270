import NIOCore
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Where each device's session runs.
///
/// On one of the transport's event loops, chosen when the engine makes the session and kept for its lifetime. The
/// device's channel is then opened on that same loop (every time it reconnects), so a batch that does not wait for
/// storage never leaves the channel's thread.
///
/// The engine only sees an executor (``sessionExecutor``); which loop it is stays the transport's knowledge.
public final class SessionPlacement: Sendable {
    private let group: any EventLoopGroup
    private let loops = Mutex<[DeviceIdentity: any EventLoop]>([:])

    public init(group: any EventLoopGroup) {
        self.group = group
    }

    /// For ``WorkoutEngine``'s `sessionExecutor`.
    public var sessionExecutor: WorkoutEngine.SessionExecutor {
        { [self] identity in placeLoop(for: identity).executor }
    }

    /// The loop `identity`'s session was placed on, if the engine placed it here.
    func loop(for identity: DeviceIdentity) -> (any EventLoop)? {
        loops.withLock { $0[identity] }
    }

    private func placeLoop(for identity: DeviceIdentity) -> any EventLoop {
        loops.withLock { loops in
            if let loop = loops[identity] { return loop }
            let loop = group.next()
            loops[identity] = loop
            return loop
        }
    }
}
