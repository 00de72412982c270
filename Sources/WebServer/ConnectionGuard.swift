import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Keeps one connection from holding the server.
///
/// The first in each connection's pipeline after the HTTP codec.
///
/// - A client address holds at most so many connections (``ConnectionCounts``); one more is closed at once.
/// - A request, headers and body, must arrive within `requestTimeout` of the connection opening, and each
///   later one within `idleTimeout` of the answer before it: a connection that sends nothing, or trickles its
///   headers, is closed.
/// - A client that closes its side while its event stream runs is gone: the connection is closed, which ends
///   the stream at once (the server allows half-closed connections, so nothing else would notice before the
///   next write).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let counts: ConnectionCounts
    private let requestTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var started = false
    private var client: ClientAddress?
    /// Requests read whole and not answered yet: while none is, the connection waits for one.
    private var unanswered = 0
    private var streaming = false
    private var deadline: Scheduled<Void>?

    init(counts: ConnectionCounts, requestTimeout: Duration, idleTimeout: Duration) {
        self.counts = counts
        self.requestTimeout = .nanoseconds(Int64(requestTimeout / .nanoseconds(1)))
        self.idleTimeout = .nanoseconds(Int64(idleTimeout / .nanoseconds(1)))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            unanswered += 1
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            streaming = response.headerFields[.contentType]?.hasPrefix("text/event-stream") == true
        case .body:
            break
        case .end:
            streaming = false
            unanswered = max(0, unanswered - 1)
            if unanswered == 0 { arm(context, in: idleTimeout) }
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed, unanswered == 0 || streaming {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let client = ClientAddress(context.channel.remoteAddress)
        guard counts.admit(client) else {
            context.close(promise: nil)
            return
        }
        self.client = client
        arm(context, in: requestTimeout)
    }

    private func arm(_ context: ChannelHandlerContext, in delay: TimeAmount) {
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: delay) { [self] in
            deadline = nil
            if unanswered == 0 { context.close(promise: nil) }
        }
    }

    private func finish() {
        deadline?.cancel()
        deadline = nil
        if let client {
            counts.release(client)
            self.client = nil
        }
    }
}

@available(*, unavailable)
extension ConnectionGuard: Sendable {}
