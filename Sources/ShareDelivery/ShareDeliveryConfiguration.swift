import SerialTransport

/// `shares.*` and how the delivery worker paces itself. The defaults live here; the daemon's configuration
/// reads the keys and hands them over.
public struct ShareDeliveryConfiguration: Sendable {
    /// How each service's shares are delivered; unlisted services spool.
    public var sinks = ShareSinkConfiguration()
    /// When a failed share is tried again.
    public var backoff = RetryBackoff()
    /// Shares one pass takes at most.
    public var batchSize = 128
    /// How long a pass waits, once woken, for more shares to join it.
    public var gatherDelay: Duration = .milliseconds(50)
    /// The most of its time the worker spends in passes while a backlog lasts (it rests between them).
    public var dutyCycle = 0.25

    public init() {}
}
