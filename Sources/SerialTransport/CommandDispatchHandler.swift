import Logging
import NIOCore
import WorkoutProtocol

/// Sent down a device's pipeline to stop it gracefully: no more reads, answer what was read, flush, close.
public struct DrainRequest: Sendable {
    public init() {}
}

/// Runs decoded lines through the device's session and writes the replies, in arrival order.
///
/// Lines that arrive in one read form one batch (one store transaction). A batch that needs no waiting
/// (a session on an in-memory store) is answered before the handler returns; any other runs as a task on
/// the channel's loop, and while it is processed the next one accumulates. Reading pauses when too many
/// lines are waiting or the device is not taking replies, so a device that never reads cannot grow the
/// daemon's memory.
public final class CommandDispatchHandler: ChannelDuplexHandler {
    public typealias InboundIn = DecodedLine
    public typealias OutboundIn = ReplyBatch
    public typealias OutboundOut = ReplyBatch

    public typealias Process = @Sendable ([DecodedLine]) async -> [Reply]
    /// Answers a batch within the current turn of the loop when it can; `nil` sends the batch to ``Process``.
    public typealias ProcessImmediately = ([DecodedLine]) -> [Reply]?

    private let process: Process
    private let processImmediately: ProcessImmediately?
    private var maximumPendingLines: Int
    /// Set once a reload changes `serial.reply_line_ending`; until then the reply encoder's own setting holds.
    private var replyLineEnding: ReplyLineEnding?
    private let logger: Logger
    private var pending: [DecodedLine] = []
    private var inFlight = false
    private var readHeld = false
    private var draining = false
    private var closing = false
    /// Completes when the most recent reply has been written to the device.
    private var lastWrite: EventLoopFuture<Void>?
    /// Batches run as tasks that prefer the channel's loop (made once, on first use).
    private var loopExecutor: EventLoopTaskExecutor?

    /// Bytes the device sent that the kernel still holds: while draining, those lines are answered too.
    public typealias UnreadInput = @Sendable () -> Int

    private let unreadInput: UnreadInput

    public init(
        maximumPendingLines: Int = 256, logger: Logger, unreadInput: @escaping UnreadInput = { 0 },
        processImmediately: ProcessImmediately? = nil, process: @escaping Process
    ) {
        self.process = process
        self.processImmediately = processImmediately
        self.unreadInput = unreadInput
        self.maximumPendingLines = maximumPendingLines
        self.logger = logger
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        submitIfIdle(context: context)
        context.fireChannelReadComplete()
        closeIfDrained(context: context)
    }

    public func read(context: ChannelHandlerContext) {
        if mustPauseReading(context: context) {
            readHeld = true
        } else {
            context.read()
        }
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        submitIfIdle(context: context)
        resumeReadingIfPossible(context: context)
        context.fireChannelWritabilityChanged()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is DrainRequest {
            draining = true
            submitIfIdle(context: context)
            resumeReadingIfPossible(context: context)
            closeIfDrained(context: context)
        } else if let change = event as? PipelineOptionsChanged {
            maximumPendingLines = change.options.maximumPendingLines
            replyLineEnding = change.options.replyLineEnding
            resumeReadingIfPossible(context: context)
            context.fireUserInboundEventTriggered(event)
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
        // Draining stops reading only once the lines the device already sent have all been read.
        (draining && unreadInput() <= 0) || pending.count >= maximumPendingLines || !context.channel.isWritable
    }

    private func resumeReadingIfPossible(context: ChannelHandlerContext) {
        if readHeld && !mustPauseReading(context: context) {
            readHeld = false
            context.read()
        }
    }

    private func submitIfIdle(context: ChannelHandlerContext) {
        // No new batch while the device is not taking replies: every committed but unsent reply is one
        // the wearable may retry, and retries are recognised only within the last remembered ids, so
        // how far the daemon runs ahead of the device's reading must stay well inside that window.
        guard !inFlight, !pending.isEmpty, context.channel.isWritable else { return }
        let batch = pending
        pending = []
        pending.reserveCapacity(batch.count)
        inFlight = true
        if let processImmediately, let replies = processImmediately(batch) {
            batchFinished(replies, for: batch, context: context)
            return
        }
        let process = self.process
        let promise = context.eventLoop.makePromise(of: [Reply].self)
        let executor = taskExecutor(for: context.eventLoop)
        Task(executorPreference: executor) { promise.succeed(await process(batch)) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        promise.futureResult.whenSuccess { replies in
            let (handler, context) = bound.value
            handler.batchFinished(replies, for: batch, context: context)
        }
    }

    private func taskExecutor(for eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        if let loopExecutor, loopExecutor.eventLoop === eventLoop { return loopExecutor }
        let executor = EventLoopTaskExecutor(eventLoop)
        loopExecutor = executor
        return executor
    }

    private func batchFinished(_ replies: [Reply], for batch: [DecodedLine], context: ChannelHandlerContext) {
        inFlight = false
        for (line, reply) in zip(batch, replies) {
            logReply(reply, for: line)
        }
        if !replies.isEmpty {
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(ReplyBatch(replies: replies, answering: batch, lineEnding: replyLineEnding)), promise: promise)
            lastWrite = promise.futureResult
        }
        submitIfIdle(context: context)
        resumeReadingIfPossible(context: context)
        closeIfDrained(context: context)
    }

    private func closeIfDrained(context: ChannelHandlerContext) {
        guard draining, !inFlight, pending.isEmpty, !closing, unreadInput() <= 0 else { return }
        closing = true
        // Close only once the flushed replies have reached the device.
        guard let lastWrite else {
            context.close(promise: nil)
            return
        }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        lastWrite.whenComplete { _ in bound.value.close(promise: nil) }
    }

    private func logReply(_ reply: Reply, for line: DecodedLine) {
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
