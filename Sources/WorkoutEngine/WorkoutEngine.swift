import Foundation
import Synchronization
import WorkoutProtocol

/// The daemon's core: one ``DeviceSession`` per device identity over a shared ``SessionStore``.
///
/// Sessions outlive connections, so a device that is unplugged mid-workout and comes back (under any
/// node name) continues where it left off.
public final class WorkoutEngine: Sendable {
    public let store: any SessionStore
    public let events: EngineEvents
    private let ids: IDAllocator
    private let clock: WorkoutClock
    private let sessions = Mutex<[DeviceIdentity: DeviceSession]>([:])
    private let sessionExecutor: SessionExecutor?
    private let limits: LiveDeviceLimits

    /// Chooses the executor a new session runs on.
    ///
    /// It is kept for the session's lifetime, across reconnections. The transport supplies it (a device's event loop,
    /// so that batches that need not wait run on the thread that read them); the engine knows it only as an executor.
    public typealias SessionExecutor = @Sendable (DeviceIdentity) -> any SerialExecutor

    /// Reads the store's id watermark, so it throws when the store cannot be read at start.
    /// `clock` is the system's (wall, boot time, synchronisation) unless a test injects its own.
    public init(
        store: any SessionStore,
        events: EngineEvents = EngineEvents(),
        clock: WorkoutClock = .system(),
        sessionExecutor: SessionExecutor? = nil,
        limits: DeviceLimits = .unlimited
    ) async throws {
        self.limits = LiveDeviceLimits(limits)
        self.store = store
        self.events = events
        self.clock = clock
        self.sessionExecutor = sessionExecutor
        self.ids = IDAllocator(after: try await store.watermark())
    }

    /// An engine on a wall clock alone, trusted as synchronised (no boot time): what most tests need.
    public convenience init(
        store: any SessionStore,
        events: EngineEvents = EngineEvents(),
        clock: @escaping @Sendable () -> Date,
        sessionExecutor: SessionExecutor? = nil,
        limits: DeviceLimits = .unlimited
    ) async throws {
        try await self.init(
            store: store,
            events: events,
            clock: .wall(clock),
            sessionExecutor: sessionExecutor,
            limits: limits
        )
    }

    public func session(for identity: DeviceIdentity) -> DeviceSession {
        sessions.withLock { sessions in
            if let session = sessions[identity] { return session }
            let session = DeviceSession(
                identity: identity,
                store: store,
                ids: ids,
                clock: clock,
                events: events,
                limits: limits,
                executor: sessionExecutor?(identity)
            )
            sessions[identity] = session
            return session
        }
    }

    /// A reload's `limits.*`: every session's next batch runs under them.
    ///
    /// A device's tokens are capped at a lower burst, not refilled.
    public func update(limits: DeviceLimits) {
        self.limits.update(limits)
    }

    /// Sessions held in memory: one per device seen since start or since its session was last evicted.
    public var sessionsInMemory: Int {
        sessions.withLock { $0.count }
    }

    /// Lets idle sessions that nothing else holds leave memory, and returns how many did.
    ///
    /// Idle means they ran no batch for `timeout`, as of `now`. Nothing is lost: every batch was committed before it
    /// was answered, so the next ``session(for:)`` restores the device's state and reply window from the store.
    ///
    /// A session is dropped only while the engine's table is its sole owner (`isKnownUniquelyReferenced`,
    /// under the table's lock): an attached device's pipeline, a running batch or a `workoutctl send` all hold
    /// it, and a new owner can only come through ``session(for:)``, which takes the same lock. So two sessions
    /// never serve one identity, whatever the timing.
    @discardableResult
    public func evictIdleSessions(idleFor timeout: Duration, now: ContinuousClock.Instant = .now) -> Int {
        guard timeout > .zero else { return 0 }
        return sessions.withLock { sessions in
            var idle: [DeviceIdentity] = []
            var index = sessions.values.startIndex
            while index != sessions.values.endIndex {
                if isKnownUniquelyReferenced(&sessions.values[index]),
                    sessions.values[index].lastActive.withLock({ $0 }) + timeout <= now
                {
                    idle.append(sessions.keys[index])
                }
                sessions.values.formIndex(after: &index)
            }
            for identity in idle { sessions[identity] = nil }
            return idle.count
        }
    }
}
