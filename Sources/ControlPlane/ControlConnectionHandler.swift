import ControlProtocol
import Logging
import NIOCore
import SerialTransport

/// One control client: reads request lines, answers them in order, and streams events once subscribed.
///
/// A client that stops reading is dropped, never waited for: when its socket stays unwritable longer
/// than ``ControlServerOptions/unwritableTimeout``, or more than ``ControlServerOptions/maximumBufferedBytes``
/// wait for it, the connection is closed.
final class ControlConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = LineFrame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Requests read ahead of the one being answered; reading pauses beyond this.
    private static let maximumQueuedRequests = 16

    private let responder: ControlResponder
    private let options: ControlServerOptions
    private let access: PeerAccess
    private let logger: Logger
    private let decoder = ControlRequestDecoder()
    private var queue: [LineFrame] = []
    private var inFlight = false
    private var readHeld = false
    private var closing = false
    private var subscriber: EventSubscriber?
    private var unwritableDeadline: Scheduled<Void>?

    init(responder: ControlResponder, options: ControlServerOptions, access: PeerAccess, logger: Logger) {
        self.responder = responder
        self.options = options
        self.access = access
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        queue.append(unwrapInboundIn(data))
        processQueue(context: context)
    }

    func read(context: ChannelHandlerContext) {
        if queue.count >= Self.maximumQueuedRequests {
            readHeld = true
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            unwritableDeadline?.cancel()
            unwritableDeadline = nil
        } else if unwritableDeadline == nil {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let timeout = options.unwritableTimeout
            unwritableDeadline = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                let (handler, context) = bound.value
                handler.drop(context: context, reason: "not reading for \(timeout)")
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopStreaming()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopStreaming()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("control client failed; closing", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    private func processQueue(context: ChannelHandlerContext) {
        while !inFlight, !closing, !queue.isEmpty {
            switch queue.removeFirst() {
            case .tooLong:
                write(
                    ControlResponder.errorLine(
                        id: nil,
                        ControlError(
                            .requestTooLong,
                            "Request lines are limited to \(ControlSocket.maximumRequestBytes) bytes."
                        )
                    ),
                    context: context
                )
            case .line(let buffer, _):
                switch decoder.decode(buffer.readableBytesView) {
                case .failure(let failure):
                    write(ControlResponder.errorLine(id: failure.id, failure.error), context: context)
                case .success(let request):
                    start(request, context: context)
                }
            }
        }
        if readHeld, queue.count < Self.maximumQueuedRequests {
            readHeld = false
            context.read()
        }
    }

    private func start(_ request: ControlRequest, context: ChannelHandlerContext) {
        inFlight = true
        let responder = self.responder
        let access = self.access
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.makeFutureWithTask { () async -> (line: [UInt8], refused: PeerAccess.Refusal?) in
            // The peer's credentials decide before anything is read or run for it.
            if let refusal = await access.check(request.call.method) {
                return (ControlResponder.errorLine(id: request.id, refusal.error), refusal)
            }
            return (await responder.respond(to: request), nil)
        }.whenSuccess { answer in
            let (handler, context) = bound.value
            handler.inFlight = false
            if let refusal = answer.refused, refusal.closesConnection {
                handler.refuse(answer.line, context: context)
                return
            }
            handler.write(answer.line, context: context)
            if case .subscribe = request.call, answer.refused == nil { handler.startStreaming(context: context) }
            handler.processQueue(context: context)
        }
    }

    /// Called once the `subscribe` reply is written, so events always follow it.
    private func startStreaming(context: ChannelHandlerContext) {
        guard subscriber == nil, !closing else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let limit = options.maximumBufferedBytes
        let subscriber = EventSubscriber(
            eventLoop: context.eventLoop,
            limit: limit,
            write: { bytes in
                let (handler, context) = bound.value
                handler.write(bytes, context: context)
            },
            overflow: { waiting in
                let (handler, context) = bound.value
                handler.drop(context: context, reason: "\(waiting) bytes of events waiting (limit \(limit))")
            }
        )
        self.subscriber = subscriber
        responder.eventHub.add(subscriber)
    }

    private func stopStreaming() {
        unwritableDeadline?.cancel()
        unwritableDeadline = nil
        if let subscriber {
            responder.eventHub.remove(subscriber)
            self.subscriber = nil
        }
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard !closing, context.channel.isActive else { return }
        let buffered = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        if buffered + bytes.count > options.maximumBufferedBytes {
            drop(
                context: context,
                reason: "\(buffered + bytes.count) bytes waiting (limit \(options.maximumBufferedBytes))"
            )
            return
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    /// Writes `line` (a refusal), then hangs up: a peer that may do nothing gets no further answers.
    private func refuse(_ line: [UInt8], context: ChannelHandlerContext) {
        guard !closing, context.channel.isActive else { return }
        closing = true
        queue.removeAll()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: line))).whenComplete { _ in
            bound.value.close(promise: nil)
        }
    }

    private func drop(context: ChannelHandlerContext, reason: String) {
        guard !closing else { return }
        closing = true
        logger.notice("dropping slow control client", metadata: ["reason": "\(reason)"])
        stopStreaming()
        context.close(promise: nil)
    }
}
