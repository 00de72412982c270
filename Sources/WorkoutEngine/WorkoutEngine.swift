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
    private let clock: @Sendable () -> Date
    private let sessions = Mutex<[DeviceIdentity: DeviceSession]>([:])
    private let sessionExecutor: SessionExecutor?

    /// Chooses the executor a new session runs on; it is kept for the session's lifetime, across
    /// reconnections. The transport supplies it (a device's event loop, so that batches that need not
    /// wait run on the thread that read them); the engine knows it only as an executor.
    public typealias SessionExecutor = @Sendable (DeviceIdentity) -> any SerialExecutor

    /// Reads the store's id watermark, so it throws when the store cannot be read at start.
    public init(
        store: any SessionStore, events: EngineEvents = EngineEvents(), clock: @escaping @Sendable () -> Date = Date.init,
        sessionExecutor: SessionExecutor? = nil
    ) async throws {
        self.store = store
        self.events = events
        self.clock = clock
        self.sessionExecutor = sessionExecutor
        self.ids = IDAllocator(after: try await store.watermark())
    }

    public func session(for identity: DeviceIdentity) -> DeviceSession {
        sessions.withLock { sessions in
            if let session = sessions[identity] { return session }
            let session = DeviceSession(
                identity: identity, store: store, ids: ids, clock: clock, events: events,
                executor: sessionExecutor?(identity))
            sessions[identity] = session
            return session
        }
    }
}
