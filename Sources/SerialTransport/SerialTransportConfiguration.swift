/// The serial transport's settings, with every default written here once.
///
/// The daemon's configuration embeds one and reads its keys over these defaults (Config/workoutd.yaml documents the
/// keys).
public struct SerialTransportConfiguration: Sendable, Equatable {
    public static let defaultBaud: UInt32 = 115_200
    public static let defaultDrainTimeout: Duration = .seconds(5)

    /// `serial.baud`: the rate configured and discovered devices are opened at.
    public var baud: UInt32
    /// `serial.max_line_bytes`, `serial.max_pending_lines`, `serial.reply_line_ending`.
    public var pipeline: PipelineOptions
    /// `reconnect.initial_delay_ms`, `reconnect.max_delay_ms`.
    public var reconnect: ReconnectPolicy
    /// `shutdown.drain_timeout_ms`: how long devices get at shutdown to take the replies to what they sent.
    public var drainTimeout: Duration

    public init(
        baud: UInt32 = defaultBaud,
        pipeline: PipelineOptions = PipelineOptions(),
        reconnect: ReconnectPolicy = ReconnectPolicy(),
        drainTimeout: Duration = defaultDrainTimeout
    ) {
        self.baud = baud
        self.pipeline = pipeline
        self.reconnect = reconnect
        self.drainTimeout = drainTimeout
    }
}
