import Foundation
import Synchronization
import WorkoutProtocol

/// Something that happened in the engine, for observers such as the control socket and metrics.
public enum EngineEvent: Sendable {
    case commandHandled(device: DeviceIdentity, command: CommandLine, reply: Reply)
    case workoutStarted(WorkoutRecord)
    case workoutEnded(WorkoutRecord)
    case shareQueued(ShareRecord)
    case shareDelivered(ShareRecord)
    case shareFailed(ShareRecord, error: String)
    case storageFailed(device: DeviceIdentity, reason: String)
}

/// Fan-out of ``EngineEvent``s to observers. Observers must not block: they run inline.
public final class EngineEvents: Sendable {
    public typealias Observer = @Sendable (EngineEvent) -> Void

    private let observers = Mutex<[Int: Observer]>([:])
    private let nextToken = Atomic<Int>(0)

    public init() {}

    /// Adds an observer; returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping Observer) -> Int {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).newValue
        observers.withLock { $0[token] = observer }
        return token
    }

    public func removeObserver(_ token: Int) {
        _ = observers.withLock { $0.removeValue(forKey: token) }
    }

    public func emit(_ event: EngineEvent) {
        let current = observers.withLock { Array($0.values) }
        for observer in current { observer(event) }
    }
}
