import Logging
import NIOCore
import ServiceSupport
import WorkoutProtocol

/// Sent down a device's pipeline to stop it gracefully.
///
/// No more reads, answer what was read, flush, close.
public struct DrainRequest: Sendable {
    public init() {}
}

/// Runs decoded lines through the device's session and writes the replies, in arrival order.
///
/// A thin shell around ``BatchRunner``, which decides when a batch runs, when reading pauses and in what order
/// replies are written: this handler feeds it the channel's events and carries out its actions. A batch that
/// needs no waiting (a session on an in-memory store) is answered before the handler returns; any other runs as
/// a task on the channel's loop, and the next batch may start while it waits for its commit.
public final class CommandDispatchHandler: ChannelDuplexHandler {
    /// The lines of one read (see ``LineDecodingHandler``).
    public typealias InboundIn = [DecodedLine]
    public typealias OutboundIn = ReplyBatch
    public typealias OutboundOut = ReplyBatch

    public typealias Process = @Sendable ([DecodedLine]) async -> [Reply]
    /// Answers a batch within the current turn of the loop when it can.
    ///
    /// `nil` sends the batch to ``Process``.
    public typealias ProcessImmediately = ([DecodedLine]) -> [Reply]?
    /// Called once a batch's replies are written.
    ///
    /// The session's events for it, held until then so a lone command's reply does not wait for its observers.
    public typealias AnnounceAnswered = () -> Void
    public typealias UnreadInput = BatchRunner.UnreadInput

    private let process: Process
    private let processImmediately: ProcessImmediately?
    private let announceAnswered: AnnounceAnswered?
    private var runner: BatchRunner
    /// Set once a reload changes `serial.reply_line_ending`.
    ///
    /// Until then the reply encoder's own setting holds.
    private var replyLineEnding: ReplyLineEnding?
    private let logger: Logger
    /// Batches run as tasks that prefer the channel's loop (made once, on first use).
    private var loopExecutor: EventLoopTaskExecutor?

    public init(
        maximumPendingLines: Int = PipelineOptions.defaultMaximumPendingLines,
        maximumBatchesInFlight: Int = BatchRunner.defaultMaximumBatchesInFlight,
        logger: Logger,
        unreadInput: @escaping UnreadInput = { 0 },
        processImmediately: ProcessImmediately? = nil,
        announceAnswered: AnnounceAnswered? = nil,
        process: @escaping Process
    ) {
        self.process = process
        self.processImmediately = processImmediately
        self.announceAnswered = announceAnswered
        self.runner = BatchRunner(
            maximumPendingLines: maximumPendingLines,
            maximumBatchesInFlight: maximumBatchesInFlight,
            unreadInput: unreadInput
        )
        self.logger = logger
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        runner.linesArrived(unwrapInboundIn(data))
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        execute(runner.readComplete(isWritable: context.channel.isWritable), context: context)
        context.fireChannelReadComplete()
    }

    public func read(context: ChannelHandlerContext) {
        if runner.readRequested(isWritable: context.channel.isWritable) { context.read() }
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        execute(runner.writabilityChanged(isWritable: context.channel.isWritable), context: context)
        context.fireChannelWritabilityChanged()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is DrainRequest {
            execute(runner.drainRequested(isWritable: context.channel.isWritable), context: context)
        } else if let change = event as? PipelineOptionsChanged {
            replyLineEnding = change.options.replyLineEnding
            execute(
                runner.pendingLimitChanged(change.options.maximumPendingLines, isWritable: context.channel.isWritable),
                context: context
            )
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

    private func execute(_ actions: BatchRunner.Actions, context: ChannelHandlerContext) {
        if let batch = actions.runBatch { run(batch, context: context) }
        if actions.resumeReading { context.read() }
        if actions.close { closeAfterLastWrite(context: context) }
    }

    private func run(_ batch: BatchRunner.Batch, context: ChannelHandlerContext) {
        if let processImmediately, let replies = processImmediately(batch.lines) {
            answered(batch.number, replies: replies, context: context)
            return
        }
        let process = self.process
        let lines = batch.lines
        let promise = context.eventLoop.makePromise(of: [Reply].self)
        let executor = taskExecutor(for: context.eventLoop)
        Task(executorPreference: executor) { promise.succeed(await process(lines)) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let number = batch.number
        promise.futureResult.whenSuccess { replies in
            let (handler, context) = bound.value
            handler.answered(number, replies: replies, context: context)
        }
    }

    private func taskExecutor(for eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        if let loopExecutor, loopExecutor.eventLoop === eventLoop { return loopExecutor }
        let executor = EventLoopTaskExecutor(eventLoop)
        loopExecutor = executor
        return executor
    }

    /// Writes the replies of every batch now answered, in read order, then lets the runner go on.
    ///
    /// A batch answered before the one ahead of it waits for it; the runner decides what runs next.
    private func answered(_ number: Int, replies: [Reply], context: ChannelHandlerContext) {
        runner.batchAnswered(number, replies: replies)
        while let ready = runner.nextAnswered() {
            if !ready.replies.isEmpty {
                // No promise per write: writes complete in order, so closing waits on one write of its own.
                context.writeAndFlush(
                    wrapOutboundOut(
                        ReplyBatch(replies: ready.replies, answering: ready.lines, lineEnding: replyLineEnding)
                    ),
                    promise: nil
                )
            }
            // The reply is on its way; what only observes it (events, debug logs) comes after, before the next batch.
            announceAnswered?()
            logReplies(ready.replies, for: ready.lines)
        }
        // After the write: whether the next batch may run depends on the device taking these replies.
        execute(runner.repliesWritten(isWritable: context.channel.isWritable), context: context)
    }

    private func closeAfterLastWrite(context: ChannelHandlerContext) {
        // Close only once the flushed replies have reached the device: an empty batch written behind them
        // completes after every write before it (at once when there was none).
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(ReplyBatch(replies: [])), promise: written)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// Every reply at debug level, otherwise the rejections only. The level is read once per batch, and the
    /// replies by index: reading a logger's level copies its handler, and walking the batch by value copies
    /// every line and reply, which together were a per-command cost at info level, where nothing is logged.
    private func logReplies(_ replies: [Reply], for batch: [DecodedLine]) {
        let everything = logger.logLevel <= .debug
        for index in replies.indices where index < batch.count && (everything || !replies[index].isSuccess) {
            logReply(replies[index], for: batch[index])
        }
    }

    private func logReply(_ reply: Reply, for line: DecodedLine) {
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
