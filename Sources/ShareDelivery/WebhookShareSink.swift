import AsyncHTTPClient
import Foundation
import NIOCore
import WorkoutProtocol

/// POSTs the share's JSON to a URL; any 2xx status is a delivery, anything else a failure to retry.
///
/// Sends `Idempotency-Key: share-<id>` so a receiver can drop the duplicate that follows a crash
/// between delivering and recording the delivery.
public struct WebhookShareSink: ShareSink {
    public let url: String
    public let timeout: Duration
    private let client: HTTPClient

    /// `client` defaults to the process-wide shared client, which needs no shutdown.
    public init(url: String, timeout: Duration, client: HTTPClient = .shared) {
        self.url = url
        self.timeout = timeout
        self.client = client
    }

    public func deliver(_ payload: SharePayload) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: "share-\(payload.shareID)")
        request.body = .bytes(ByteBuffer(bytes: try payload.json()))
        let milliseconds = timeout.inMilliseconds
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .milliseconds(max(1, milliseconds)))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw ShareDeliveryError("POST \(url) timed out after \(milliseconds) ms")
        } catch {
            throw ShareDeliveryError("POST \(url) failed: \(error)")
        }
        // Read (a bounded part of) the body so the connection can be reused, and keep a hint for the error.
        let body = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
        guard (200..<300).contains(response.status.code) else {
            let hint = body.prefix(200).trimmingCharacters(in: .whitespacesAndNewlines)
            throw ShareDeliveryError("POST \(url) answered \(response.status.code) \(response.status.reasonPhrase)\(hint.isEmpty ? "" : ": \(hint)")")
        }
    }
}
