import Foundation
import Synchronization
import WorkoutProtocol

/// Something that happened in the engine, for observers such as the control socket and metrics.
///
/// For one device, a batch's events come in the order things happened, from its session alone:
/// ``batchReceived(_:)``, then what its commands caused (workouts, shares, a storage failure), then
/// ``batchAnswered(_:)`` — whether the batch ran at once or waited for storage.
public enum EngineEvent: Sendable {
    /// A batch of lines about to run on its device's session.
    case batchReceived(ReceivedBatch)
    /// The batch's replies, one per line, as they go back to whoever sent it.
    ///
    /// "a command was handled", reported once per batch for every observer (counters, latency, the event stream).
    case batchAnswered(AnsweredBatch)
    case workoutStarted(WorkoutRecord)
    case workoutEnded(WorkoutRecord)
    case shareQueued(ShareRecord)
    case shareDelivered(ShareRecord)
    case shareFailed(ShareRecord, error: String)
    case storageFailed(device: DeviceIdentity, reason: String)
}

/// The events of one emission, with what the batch observers ask of every batch counted once.
///
/// An emission is a session's batch: received, what it caused, answered.
///
/// Matching a case of ``EngineEvent`` goes through the Swift runtime (it is an enum of several payloads), and
/// several observers each walking a pipelined batch's events for their own question cost a noticeable part
/// of the device loop; one walk here answers them all.
public struct EmittedEvents: Sendable {
    public let events: [EngineEvent]
    /// The batch's answer, when these are a batch's events.
    public private(set) var answered: AnsweredBatch?
    /// Whether a batch begins here.
    ///
    /// A session emits a batch's ``EngineEvent/batchReceived(_:)`` first (with the rest of its events when it answers
    /// at once, alone when it awaits storage); a delivery's events begin none.
    public private(set) var beginsBatch = false
    public private(set) var workoutsStarted = 0
    public private(set) var workoutsEnded = 0
    public private(set) var sharesQueued = 0
    public private(set) var sharesDelivered = 0
    public private(set) var shareFailures = 0
    public private(set) var storageFailures = 0

    public init(_ events: [EngineEvent]) {
        self.events = events
        for index in events.indices {
            // Matched without binding a payload, so the event is read in place; the answer once per batch.
            switch events[index] {
            case .batchReceived: if index == 0 { beginsBatch = true }
            case .batchAnswered: if case .batchAnswered(let batch) = events[index] { answered = batch }
            case .workoutStarted: workoutsStarted += 1
            case .workoutEnded: workoutsEnded += 1
            case .shareQueued: sharesQueued += 1
            case .shareDelivered: sharesDelivered += 1
            case .shareFailed: shareFailures += 1
            case .storageFailed: storageFailures += 1
            }
        }
    }

    /// Workouts and shares a committed batch created or changed (so storage worked).
    public var committedChanges: Int { workoutsStarted + workoutsEnded + sharesQueued }
}

/// Who sent a batch: the device itself, or an operator through the control socket (`workoutctl send`).
public enum CommandOrigin: Sendable, Hashable {
    case device
    case control
}

/// A batch as its session starts running it.
public struct ReceivedBatch: Sendable {
    public let device: DeviceIdentity
    public let origin: CommandOrigin
    public let lines: [DecodedLine]
}

/// A batch with its replies (`replies[i]` answers `lines[i]`).
public struct AnsweredBatch: Sendable {
    public let device: DeviceIdentity
    public let origin: CommandOrigin
    public let lines: [DecodedLine]
    public let replies: [Reply]
    /// When the session started running the batch, for the handler latency.
    ///
    /// When it was stepped, which for a pipelining device may be while the batch ahead of it still commits (its latency
    /// then includes that wait).
    public let started: ContinuousClock.Instant
    /// When its replies were ready.
    ///
    /// The event itself may come after they were written (see ``DeviceSession/answerImmediately(_:from:)``), so the
    /// handler latency ends here, not at the event.
    public let answered: ContinuousClock.Instant

    /// Each line with its reply, in order.
    public var handled: Zip2Sequence<[DecodedLine], [Reply]> { zip(lines, replies) }
}

/// Fan-out of ``EngineEvent``s to observers. Observers must not block: they run inline.
///
/// A session emits each batch's events in one call (received, what it caused, answered), and an observer added
/// with ``addBatchObserver(_:)`` sees them in one call too: it takes its lock, or rings its doorbell, once per
/// batch instead of once per command. ``addObserver(_:)`` is the same fan-out seen one event at a time.
public final class EngineEvents: Sendable {
    public typealias Observer = @Sendable (EngineEvent) -> Void
    /// Sees events in the order they happened, several at a time (a batch's events together).
    public typealias BatchObserver = @Sendable (EmittedEvents) -> Void

    /// An observer held by reference.
    ///
    /// A closure stored straight in an array is kept in its most generic form, and every call then copied its argument
    /// into a temporary.
    private final class Registered: Sendable {
        let observe: BatchObserver
        init(_ observe: @escaping BatchObserver) { self.observe = observe }
    }

    private struct Registry {
        var byToken: [Int: Registered] = [:]
        /// The observers as one array, rebuilt on change, so emitting (per batch) only retains it.
        var current: [Registered] = []
    }

    private let registry = Mutex(Registry())
    private let nextToken = Atomic<Int>(0)

    public init() {}

    /// Adds an observer that sees one event per call; returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping Observer) -> Int {
        addBatchObserver { emitted in
            for event in emitted.events { observer(event) }
        }
    }

    /// Adds an observer that sees the events of one emission (a batch's) in one call.
    ///
    /// Returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addBatchObserver(_ observer: @escaping BatchObserver) -> Int {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).newValue
        registry.withLock { registry in
            registry.byToken[token] = Registered(observer)
            registry.current = Array(registry.byToken.values)
        }
        return token
    }

    public func removeObserver(_ token: Int) {
        registry.withLock { registry in
            guard registry.byToken.removeValue(forKey: token) != nil else { return }
            registry.current = Array(registry.byToken.values)
        }
    }

    public func emit(_ event: EngineEvent) {
        emit(contentsOf: [event])
    }

    /// Emits `events` in order, to each observer in one call.
    public func emit(contentsOf events: [EngineEvent]) {
        guard !events.isEmpty else { return }
        let emitted = EmittedEvents(events)
        for registered in registry.withLock({ $0.current }) { registered.observe(emitted) }
    }
}
