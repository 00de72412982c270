/// Somewhere a queued share is sent: a spool directory, a webhook, an external command.
///
/// A sink may be called again for a share it already delivered (after a crash before the delivery was
/// recorded), so deliveries should be idempotent on ``SharePayload/shareID`` where the target allows it.
public protocol ShareSink: Sendable {
    /// Delivers one share; throws ``ShareDeliveryError`` (or any error) when it did not arrive.
    func deliver(_ payload: SharePayload) async throws
}

/// Why a delivery attempt failed, as a sentence kept in the share's `lastError`.
public struct ShareDeliveryError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
