import NIOCore
import Synchronization

/// One client's end of the event stream: event lines gather here until its event loop writes them.
///
/// Publishing only appends under a lock, so a device's path never waits for a client. Lines that
/// arrive while a write is pending are written together. More than `limit` bytes waiting means the
/// client is not keeping up: it is dropped rather than buffered for.
final class EventSubscriber: Sendable {
    private struct Pending {
        var bytes: [UInt8] = []
        var flushScheduled = false
        var overflowed = false
    }

    private let eventLoop: any EventLoop
    private let limit: Int
    private let pending = Mutex(Pending())
    private let write: @Sendable ([UInt8]) -> Void
    private let overflow: @Sendable (Int) -> Void

    /// `write` and `overflow` run on `eventLoop`.
    init(
        eventLoop: any EventLoop,
        limit: Int,
        write: @escaping @Sendable ([UInt8]) -> Void,
        overflow: @escaping @Sendable (Int) -> Void
    ) {
        self.eventLoop = eventLoop
        self.limit = limit
        self.write = write
        self.overflow = overflow
    }

    func enqueue(_ line: [UInt8]) {
        enum Action {
            case none, flush
            case overflow(Int)
        }
        let action: Action = pending.withLock { pending in
            guard !pending.overflowed else { return .none }
            pending.bytes.append(contentsOf: line)
            if pending.bytes.count > limit {
                pending.overflowed = true
                let waiting = pending.bytes.count
                pending.bytes = []
                return .overflow(waiting)
            }
            guard !pending.flushScheduled else { return .none }
            pending.flushScheduled = true
            return .flush
        }
        switch action {
        case .none:
            break
        case .flush:
            eventLoop.execute { self.flush() }
        case .overflow(let waiting):
            let overflow = self.overflow
            eventLoop.execute { overflow(waiting) }
        }
    }

    private func flush() {
        let bytes: [UInt8] = pending.withLock { pending in
            pending.flushScheduled = false
            var taken: [UInt8] = []
            swap(&taken, &pending.bytes)
            return taken
        }
        if !bytes.isEmpty { write(bytes) }
    }
}
