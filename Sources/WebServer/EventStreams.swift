import ControlPlane
import NIOCore
import NIOPosix
import Synchronization

/// The `/api/events` streams of one running server.
///
/// The control socket's event lines as Server-Sent Events.
///
/// Bounded like a control client: bytes the HTTP client has not taken yet count against the backlog limit, and a
/// client that falls that far behind is cut off (its `EventSource` reconnects and sees the gap in `seq`). Streams
/// are capped per client address and in total. A stream ends, and its memory with it, when its connection closes,
/// when its session is logged out or expires, and when a write fails: a comment line every heartbeat period
/// makes that write happen on an idle hub too. After a burst of streams has ended, the allocator is trimmed
/// (`releaseMemory`), so what they used is given back to the kernel.
final class EventStreams: Sendable {
    struct Limits: Sendable {
        var perAddress: Int
        var total: Int
        var backlogBytes: Int
        var heartbeat: Duration
    }

    /// Why a stream was not opened.
    enum Refusal: Error, Equatable {
        case tooManyFromAddress(limit: Int)
        case tooMany(limit: Int)
    }

    private final class Stream: Sendable {
        let continuation: AsyncStream<ArraySlice<UInt8>>.Continuation
        let client: ClientAddress
        let session: String?
        /// Bytes yielded and not yet taken by the HTTP writer.
        let waiting = Atomic<Int>(0)
        let limit: Int

        init(
            continuation: AsyncStream<ArraySlice<UInt8>>.Continuation,
            client: ClientAddress,
            session: String?,
            limit: Int
        ) {
            self.continuation = continuation
            self.client = client
            self.session = session
            self.limit = limit
        }

        /// Hands `frame` to the writer, or ends the stream when the client is too far behind to take it.
        func send(_ frame: [UInt8]) {
            if waiting.add(frame.count, ordering: .relaxed).newValue > limit {
                continuation.finish()
            } else {
                continuation.yield(frame[...])
            }
        }
    }

    private struct State {
        var next = 0
        var streams: [Int: Stream] = [:]
        var perClient: [ClientAddress: Int] = [:]
        var heartbeat: RepeatedTask?
        /// Streams ended since memory was last released, and whether a release is scheduled.
        var endedSinceRelease = 0
        var releaseScheduled = false
    }

    /// Streams ending together, at least this many, are a burst worth giving memory back after.
    static let burst = 8
    static let heartbeatFrame = Array(": heartbeat\n\n".utf8)

    private let responder: ControlResponder
    private let limits: Limits
    private let releaseMemory: @Sendable () -> Void
    private let loop: any EventLoop
    private let state = Mutex(State())

    init(responder: ControlResponder, limits: Limits, releaseMemory: @escaping @Sendable () -> Void = {}) {
        self.responder = responder
        self.limits = limits
        self.releaseMemory = releaseMemory
        loop = MultiThreadedEventLoopGroup.singleton.any()
    }

    /// Streams open now.
    var count: Int { state.withLock { $0.streams.count } }

    /// A new stream for `client`: `: ready` once subscribed, then one `data:` event per event line. It ends when
    /// `closed` completes (its connection closed) and at `session`'s expiry.
    func makeStream(
        client: ClientAddress,
        session: WebSessions.Admission?,
        closed: EventLoopFuture<Void>?
    ) throws(Refusal) -> some AsyncSequence<ArraySlice<UInt8>, Never> & Sendable {
        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        let entry = Stream(continuation: continuation, client: client, session: session?.id, limit: limits.backlogBytes)
        let opened: Result<Int, Refusal> = state.withLock { state in
            if state.perClient[client, default: 0] >= limits.perAddress {
                return .failure(.tooManyFromAddress(limit: limits.perAddress))
            }
            if state.streams.count >= limits.total { return .failure(.tooMany(limit: limits.total)) }
            state.next += 1
            state.streams[state.next] = entry
            state.perClient[client, default: 0] += 1
            if state.heartbeat == nil { state.heartbeat = startHeartbeat() }
            return .success(state.next)
        }
        let id: Int
        switch opened {
        case .success(let opened): id = opened
        case .failure(let refusal): throw refusal
        }
        let subscription = responder.subscribeToEvents(
            on: loop,
            limit: limits.backlogBytes,
            write: { lines in entry.send(Self.serverSentEvents(lines)) },
            overflow: { _ in continuation.finish() }
        )
        let expiry = session.map { session in
            loop.scheduleTask(in: .nanoseconds(Int64((session.expiry - .now) / .nanoseconds(1)))) {
                continuation.finish()
            }
        }
        continuation.onTermination = { [weak self] _ in
            subscription.cancel()
            expiry?.cancel()
            self?.ended(id)
        }
        closed?.whenComplete { _ in continuation.finish() }
        continuation.yield(Array(": ready\n\n".utf8)[...])
        return stream.map { chunk in
            entry.waiting.subtract(chunk.count, ordering: .relaxed)
            return chunk
        }
    }

    /// Ends the streams of these sessions (logged out, or pushed out by newer logins).
    func end(sessions: [String]) {
        guard !sessions.isEmpty else { return }
        let ending = state.withLock { state in
            state.streams.values.filter { $0.session.map(sessions.contains) ?? false }
        }
        for stream in ending { stream.continuation.finish() }
    }

    /// Ends every stream (the server is stopping or moving), so no connection outlives it.
    func finishAll() {
        for stream in state.withLock({ Array($0.streams.values) }) { stream.continuation.finish() }
    }

    private func ended(_ id: Int) {
        let release = state.withLock { state -> Bool in
            guard let stream = state.streams.removeValue(forKey: id) else { return false }
            let left = (state.perClient[stream.client] ?? 1) - 1
            state.perClient[stream.client] = left > 0 ? left : nil
            state.endedSinceRelease += 1
            guard state.streams.isEmpty else { return false }
            state.heartbeat?.cancel()
            state.heartbeat = nil
            guard state.endedSinceRelease >= Self.burst, !state.releaseScheduled else { return false }
            state.releaseScheduled = true
            return true
        }
        // A moment later: the connections of the streams just ended close after them.
        if release {
            loop.scheduleTask(in: .seconds(1)) { [weak self] in
                guard let self else { return }
                state.withLock { state in
                    state.releaseScheduled = false
                    state.endedSinceRelease = 0
                }
                releaseMemory()
            }
        }
    }

    /// One timer for every stream, running only while one is open.
    ///
    /// An idle hub with nobody watching stays idle.
    private func startHeartbeat() -> RepeatedTask {
        let period = TimeAmount.nanoseconds(Int64(limits.heartbeat / .nanoseconds(1)))
        return loop.scheduleRepeatedTask(initialDelay: period, delay: period) { [weak self] _ in
            guard let self else { return }
            for stream in state.withLock({ Array($0.streams.values) }) { stream.send(Self.heartbeatFrame) }
        }
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
