import Synchronization

/// A client's place on the event stream outside the control socket (the HTTP API's `/api/events`).
///
/// Cancelling it (or dropping the last reference) stops its lines.
public final class EventSubscription: Sendable {
    private let hub: ControlEventHub
    private let subscriber: Mutex<EventSubscriber?>

    init(hub: ControlEventHub, subscriber: EventSubscriber) {
        self.hub = hub
        self.subscriber = Mutex(subscriber)
    }

    /// Stops the lines; later calls do nothing.
    public func cancel() {
        if let subscriber = subscriber.withLock({ $0.take() }) { hub.remove(subscriber) }
    }

    deinit { cancel() }
}
