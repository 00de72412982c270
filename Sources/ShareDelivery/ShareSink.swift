/// Somewhere a queued share is sent: a spool directory, a webhook, an external command.
///
/// A sink may be called again for a share it already delivered (after a crash before the delivery was
/// recorded), so deliveries should be idempotent on ``SharePayload/shareID`` where the target allows it.
public protocol ShareSink: Sendable {
    /// Delivers one share; throws ``ShareDeliveryError`` (or any error) when it did not arrive.
    func deliver(_ payload: SharePayload) async throws

    /// Delivers a delivery pass's shares for this sink, one result per payload in order. The default
    /// delivers them one by one; a sink that can share work between them (one fsync of the spool
    /// directory, one hop to its I/O thread) does so.
    func deliver(_ payloads: [SharePayload]) async -> [Result<Void, any Error>]
}

extension ShareSink {
    public func deliver(_ payloads: [SharePayload]) async -> [Result<Void, any Error>] {
        var results: [Result<Void, any Error>] = []
        results.reserveCapacity(payloads.count)
        for payload in payloads {
            do {
                try await deliver(payload)
                results.append(.success(()))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }
}

/// Why a delivery attempt failed, as a sentence kept in the share's `lastError`.
public struct ShareDeliveryError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
