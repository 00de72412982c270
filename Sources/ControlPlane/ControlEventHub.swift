import ControlProtocol
import Foundation
import SerialTransport
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Turns engine events and device activity into ``ControlEvent`` lines for every subscribed client.
///
/// Numbering and encoding happen under one lock, so every client sees the events in `seq` order.
/// With no subscribers, publishing costs one atomic load.
public final class ControlEventHub: Sendable {
    private struct State {
        var sequence: UInt64 = 0
        var subscribers: [ObjectIdentifier: EventSubscriber] = [:]
        let encoder = ControlSocket.makeEncoder()
    }

    private let state = Mutex(State())
    private let subscriberCount = Atomic<Int>(0)

    public init() {}

    /// Engine events: batches, workouts and shares, in the order their session emitted them.
    ///
    /// Batches count whether they came from the device or from `send`.
    public func publish(_ event: EngineEvent) {
        // Before the switch: matching the event copies it out, for nobody.
        guard hasSubscribers else { return }
        switch event {
        case .batchReceived(let batch):
            publishReceived(batch.device, batch.lines, origin: ControlEvent.Origin(batch.origin))
        case .batchAnswered(let batch):
            publishReplies(batch.device, batch.replies, origin: ControlEvent.Origin(batch.origin))
        case .workoutStarted(let workout):
            broadcast(.workoutStarted(workout))
        case .workoutEnded(let workout):
            broadcast(.workoutEnded(workout))
        case .shareQueued(let share):
            broadcast(.shareQueued(share))
        case .shareDelivered(let share):
            broadcast(.shareDelivered(share))
        case .shareFailed(let share, let error):
            broadcast(.shareFailed(share, error: error))
        case .storageFailed(let device, let reason):
            broadcast(.storageFailed(device: device.rawValue, reason: reason))
        }
    }

    /// A batch's events, in order.
    public func publish(contentsOf events: [EngineEvent]) {
        guard hasSubscribers else { return }
        for event in events { publish(event) }
    }

    public func publish(_ activity: DeviceActivity) {
        guard hasSubscribers else { return }
        switch activity {
        case .connected(let stats):
            broadcast(.deviceAdded(device: stats.identity.rawValue, node: stats.path))
        case .disconnected(let stats):
            broadcast(.deviceRemoved(device: stats.identity.rawValue, node: stats.path))
        }
    }

    private func publishReceived(_ device: DeviceIdentity, _ lines: [DecodedLine], origin: ControlEvent.Origin) {
        for line in lines {
            broadcast(
                .commandReceived(
                    device: device.rawValue,
                    commandType: try? line.command.get().type,
                    id: line.id,
                    origin: origin
                )
            )
        }
    }

    private func publishReplies(_ device: DeviceIdentity, _ replies: [Reply], origin: ControlEvent.Origin) {
        for reply in replies {
            broadcast(.replySent(device: device.rawValue, reply: reply, origin: origin))
        }
    }

    func broadcast(_ detail: ControlEvent.Detail) {
        guard hasSubscribers else { return }
        state.withLock { state in
            state.sequence += 1
            let event = ControlEventLine(event: ControlEvent(sequence: state.sequence, time: Date(), detail: detail))
            // Every field is a string, number or date: encoding cannot fail short of a Foundation bug.
            guard let line = try? ControlSocket.line(event, encoder: state.encoder) else { return }
            for subscriber in state.subscribers.values { subscriber.enqueue(line) }
        }
    }

    var subscribers: Int { subscriberCount.load(ordering: .relaxed) }
    var hasSubscribers: Bool { subscribers > 0 }

    func add(_ subscriber: EventSubscriber) {
        state.withLock { state in
            state.subscribers[ObjectIdentifier(subscriber)] = subscriber
            subscriberCount.store(state.subscribers.count, ordering: .relaxed)
        }
    }

    func remove(_ subscriber: EventSubscriber) {
        state.withLock { state in
            state.subscribers[ObjectIdentifier(subscriber)] = nil
            subscriberCount.store(state.subscribers.count, ordering: .relaxed)
        }
    }
}

extension ControlEvent.Origin {
    init(_ origin: CommandOrigin) {
        switch origin {
        case .device: self = .device
        case .control: self = .control
        }
    }
}
