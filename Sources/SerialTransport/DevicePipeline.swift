import Logging
import NIOCore
import WorkoutEngine
import WorkoutProtocol

/// Settings that shape every device's pipeline.
public struct PipelineOptions: Sendable {
    public var maximumLineLength: Int
    public var maximumPendingLines: Int
    public var replyLineEnding: ReplyLineEnding

    public init(maximumLineLength: Int = 4096, maximumPendingLines: Int = 256, replyLineEnding: ReplyLineEnding = .auto) {
        self.maximumLineLength = maximumLineLength
        self.maximumPendingLines = maximumPendingLines
        self.replyLineEnding = replyLineEnding
    }
}

/// The per-device channel pipeline: bytes → lines → commands → session → replies → bytes.
public enum DevicePipeline {
    public static func addHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations,
        options: PipelineOptions,
        logger: Logger,
        unreadInput: @escaping CommandDispatchHandler.UnreadInput = { 0 },
        processImmediately: CommandDispatchHandler.ProcessImmediately? = nil,
        process: @escaping CommandDispatchHandler.Process
    ) throws {
        try pipeline.addHandler(ByteCountingHandler())
        try pipeline.addHandler(ByteToMessageHandler(LineFrameDecoder(maximumLineLength: options.maximumLineLength)))
        try pipeline.addHandler(CommandDecodingHandler(maximumLineLength: options.maximumLineLength))
        try pipeline.addHandler(MessageToByteHandler(ReplyLineEncoder(lineEnding: options.replyLineEnding)))
        try pipeline.addHandler(CommandDispatchHandler(
            maximumPendingLines: options.maximumPendingLines, logger: logger, unreadInput: unreadInput,
            processImmediately: processImmediately, process: process))
    }
}
