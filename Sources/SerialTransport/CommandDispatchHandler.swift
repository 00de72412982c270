import Logging
import NIOCore
import WorkoutProtocol

/// Sent down a device's pipeline to stop it gracefully: no more reads, answer what was read, flush, close.
public struct DrainRequest: Sendable {
    public init() {}
}

/// Runs decoded lines through the device's session and writes the replies, in arrival order.
///
/// Lines that arrive in one read form one batch (one store transaction). While a batch is being
/// processed the next one accumulates; reading pauses when too many lines are waiting or the device
/// is not taking replies, so a device that never reads cannot grow the daemon's memory.
public final class CommandDispatchHandler: ChannelDuplexHandler {
    public typealias InboundIn = CommandLine
    public typealias OutboundIn = Reply
    public typealias OutboundOut = Reply

    public typealias Process = @Sendable ([CommandLine]) async -> [Reply]

    private let process: Process
    private let maximumPendingLines: Int
    private let logger: Logger
    private var pending: [CommandLine] = []
    private var inFlight = false
    private var readHeld = false
    private var draining = false
    private var closing = false
    /// Completes when the most recent reply has been written to the device.
    private var lastWrite: EventLoopFuture<Void>?

    public init(maximumPendingLines: Int = 1024, logger: Logger, process: @escaping Process) {
        self.process = process
        self.maximumPendingLines = maximumPendingLines
        self.logger = logger
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        submitIfIdle(context: context)
        context.fireChannelReadComplete()
    }

    public func read(context: ChannelHandlerContext) {
        if mustPauseReading(context: context) {
            readHeld = true
        } else {
            context.read()
        }
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        resumeReadingIfPossible(context: context)
        context.fireChannelWritabilityChanged()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is DrainRequest {
            draining = true
            submitIfIdle(context: context)
            closeIfDrained(context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // EIO when the other end of a pty goes away, ENXIO when a USB device is pulled: the device is gone.
        logger.info("device read failed; closing", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    private func mustPauseReading(context: ChannelHandlerContext) -> Bool {
        draining || pending.count >= maximumPendingLines || !context.channel.isWritable
    }

    private func resumeReadingIfPossible(context: ChannelHandlerContext) {
        if readHeld && !mustPauseReading(context: context) {
            readHeld = false
            context.read()
        }
    }

    private func submitIfIdle(context: ChannelHandlerContext) {
        guard !inFlight, !pending.isEmpty else { return }
        let batch = pending
        pending = []
        pending.reserveCapacity(batch.count)
        inFlight = true
        let process = self.process
        let future = context.eventLoop.makeFutureWithTask { await process(batch) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        future.whenSuccess { replies in
            let (handler, context) = bound.value
            handler.batchFinished(replies, for: batch, context: context)
        }
    }

    private func batchFinished(_ replies: [Reply], for batch: [CommandLine], context: ChannelHandlerContext) {
        inFlight = false
        for (line, reply) in zip(batch, replies) {
            logReply(reply, for: line)
        }
        if let last = replies.last {
            for reply in replies.dropLast() {
                context.write(wrapOutboundOut(reply), promise: nil)
            }
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(last), promise: promise)
            lastWrite = promise.futureResult
        }
        submitIfIdle(context: context)
        resumeReadingIfPossible(context: context)
        closeIfDrained(context: context)
    }

    private func closeIfDrained(context: ChannelHandlerContext) {
        guard draining, !inFlight, pending.isEmpty, !closing else { return }
        closing = true
        // Close only once the flushed replies have reached the device.
        guard let lastWrite else {
            context.close(promise: nil)
            return
        }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        lastWrite.whenComplete { _ in bound.value.close(promise: nil) }
    }

    private func logReply(_ reply: Reply, for line: CommandLine) {
        guard logger.logLevel <= .debug || !reply.isSuccess else { return }
        var metadata: Logger.Metadata = [:]
        if let id = reply.id { metadata["command_id"] = "\(id)" }
        switch reply.outcome {
        case .ok(let ack):
            metadata["command_type"] = "\(ack.commandType.rawValue)"
            logger.debug("command acknowledged", metadata: metadata)
        case .error(let error):
            metadata["code"] = "\(error.code.rawValue)"
            if let field = error.field { metadata["field"] = "\(field)" }
            if case .success(let command) = line.command { metadata["command_type"] = "\(command.type.rawValue)" }
            logger.debug("command rejected", metadata: metadata)
        }
    }
}
