import Logging
import Metrics
import NIOCore
import WorkoutEngine
import WorkoutProtocol

/// Settings that shape every device's pipeline (part of ``SerialTransportConfiguration``).
public struct PipelineOptions: Sendable, Equatable {
    public static let defaultMaximumLineLength = 4096
    public static let defaultMaximumPendingLines = 256

    public var maximumLineLength: Int
    public var maximumPendingLines: Int
    public var replyLineEnding: ReplyLineEnding
    /// Batches of one device run at once (see ``BatchRunner``).
    ///
    /// With two, the next batch's session step overlaps the previous batch's commit. Not a configuration key; a
    /// connection keeps the value it opened with.
    public var maximumBatchesInFlight: Int

    public init(
        maximumLineLength: Int = defaultMaximumLineLength,
        maximumPendingLines: Int = defaultMaximumPendingLines,
        replyLineEnding: ReplyLineEnding = .auto,
        maximumBatchesInFlight: Int = BatchRunner.defaultMaximumBatchesInFlight
    ) {
        self.maximumLineLength = maximumLineLength
        self.maximumPendingLines = maximumPendingLines
        self.replyLineEnding = replyLineEnding
        self.maximumBatchesInFlight = maximumBatchesInFlight
    }
}

/// The per-device channel pipeline: bytes → lines → commands → session → replies → bytes.
///
/// A reload's new options reach an open pipeline as the user inbound event ``PipelineOptionsChanged``.
public enum DevicePipeline {
    public static func addHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations,
        options: PipelineOptions,
        logger: Logger,
        metrics: any MetricsFactory = MetricsSystem.factory,
        unreadInput: @escaping CommandDispatchHandler.UnreadInput = { 0 },
        processImmediately: CommandDispatchHandler.ProcessImmediately? = nil,
        announceAnswered: CommandDispatchHandler.AnnounceAnswered? = nil,
        process: @escaping CommandDispatchHandler.Process
    ) throws {
        try pipeline.addHandler(ByteCountingHandler(metrics: metrics))
        let limit = LineLengthLimit(options.maximumLineLength)
        // Framing and decoding in one handler, the read's lines passed on together (see LineDecodingHandler).
        try pipeline.addHandler(LineDecodingHandler(limit: limit))
        try pipeline.addHandler(MessageToByteHandler(ReplyLineEncoder(lineEnding: options.replyLineEnding)))
        try pipeline.addHandler(
            CommandDispatchHandler(
                maximumPendingLines: options.maximumPendingLines,
                maximumBatchesInFlight: options.maximumBatchesInFlight,
                logger: logger,
                unreadInput: unreadInput,
                processImmediately: processImmediately,
                announceAnswered: announceAnswered,
                process: process
            )
        )
    }
}

/// Fired into an open device pipeline when a reload changes its options. The handlers that hold a setting take
/// it from the event: the line limit applies from the next read on (see ``LineFrameDecoder``), the pending-line
/// limit at the next read decision, and the reply line ending to the next batch of replies written.
public struct PipelineOptionsChanged: Sendable {
    public var options: PipelineOptions

    public init(_ options: PipelineOptions) {
        self.options = options
    }
}
