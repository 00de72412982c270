import ServiceSupport

/// `shares.*` and how the delivery worker paces itself. The defaults live here; the daemon's configuration
/// reads the keys and hands them over.
public struct ShareDeliveryConfiguration: Sendable {
    /// How each service's shares are delivered; unlisted services spool.
    public var sinks = ShareSinkConfiguration()
    /// When a failed share is tried again.
    public var backoff = RetryBackoff()
    /// Shares one pass takes at most.
    public var batchSize = 128
    /// How long the devices must be quiet before a pass starts.
    ///
    /// Shares queued meanwhile join it, and the pass's file work does not run beside a stream of commands (see
    /// `DeviceTraffic`).
    public var gatherDelay: Duration = .milliseconds(50)
    /// How long a pass waits at most for that pause, so shares still go out while the devices never pause.
    public var maximumDeferral: Duration = .seconds(2)
    /// The most of its time the worker spends in passes while a backlog lasts (it rests between them).
    public var dutyCycle = 0.25

    public init() {}
}
