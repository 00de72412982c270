import ControlPlane
import NIOCore
import NIOPosix
import Synchronization

/// The `/api/events` streams of one running server.
///
/// The control socket's event lines as Server-Sent Events.
///
/// Bounded like a control client: bytes the HTTP client has not taken yet count against `limit`, and a client
/// that falls that far behind is cut off (its `EventSource` reconnects and sees the gap in `seq`).
final class EventStreams: Sendable {
    private let responder: ControlResponder
    private let limit: Int
    private let open = Mutex<(next: Int, streams: [Int: AsyncStream<ArraySlice<UInt8>>.Continuation])>((0, [:]))

    init(responder: ControlResponder, limit: Int) {
        self.responder = responder
        self.limit = limit
    }

    /// A new stream: `: ready` once subscribed, then one `data:` event per event line.
    func makeStream() -> some AsyncSequence<ArraySlice<UInt8>, Never> & Sendable {
        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        let waiting = Atomic<Int>(0)
        let id = open.withLock { open in
            open.next += 1
            open.streams[open.next] = continuation
            return open.next
        }
        let limit = self.limit
        let subscription = responder.subscribeToEvents(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            limit: limit,
            write: { lines in
                let frame = Self.serverSentEvents(lines)
                if waiting.add(frame.count, ordering: .relaxed).newValue > limit {
                    continuation.finish()
                } else {
                    continuation.yield(frame[...])
                }
            },
            overflow: { _ in continuation.finish() }
        )
        continuation.onTermination = { [weak self] _ in
            subscription.cancel()
            _ = self?.open.withLock { $0.streams.removeValue(forKey: id) }
        }
        continuation.yield(Array(": ready\n\n".utf8)[...])
        return stream.map { chunk in
            waiting.subtract(chunk.count, ordering: .relaxed)
            return chunk
        }
    }

    /// Ends every stream (the server is stopping or moving), so no connection outlives it.
    func finishAll() {
        for continuation in open.withLock({ Array($0.streams.values) }) { continuation.finish() }
    }

    /// `{"event":…}\n` lines as SSE: `data: {"event":…}\n\n` each (JSON never holds a raw newline).
    static func serverSentEvents(_ lines: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(lines.count + 16)
        for line in lines.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            frame.append(contentsOf: "data: ".utf8)
            frame.append(contentsOf: line)
            frame.append(contentsOf: [UInt8(ascii: "\n"), UInt8(ascii: "\n")])
        }
        return frame
    }
}
