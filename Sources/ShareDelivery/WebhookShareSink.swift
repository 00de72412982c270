import AsyncHTTPClient
import Foundation
import NIOCore
import WorkoutProtocol

/// POSTs the share's JSON to a URL; any 2xx status is a delivery, anything else a failure to retry.
///
/// Sends `Idempotency-Key: share-<id>` so a receiver can drop the duplicate that follows a crash
/// between delivering and recording the delivery. Redirects are not followed: a 3xx is a failure that
/// names the status (following one would send the share, and whatever token the URL carries, wherever the
/// server points, https to http included). Messages name the URL as ``redactedURL`` only: a token in its
/// query or user part never reaches a log, `lastError`, `workoutctl shares` or an event.
public struct WebhookShareSink: ShareSink {
    public let url: String
    public let timeout: Duration
    private let client: HTTPClient

    /// `client` defaults to one process-wide client that does not follow redirects and needs no shutdown.
    public init(url: String, timeout: Duration, client: HTTPClient = WebhookShareSink.sharedClient) {
        self.url = url
        self.timeout = timeout
        self.client = client
    }

    /// AsyncHTTPClient's shared client's settings, with redirects refused.
    public static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// `url` as scheme://host[:port]/path: without user, password, query or fragment.
    public var redactedURL: String { Self.redacted(url) }

    /// `text` as scheme://host[:port]/path, or a placeholder when it is no URL at all.
    public static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.host != nil else { return "<unparsable URL>" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "<unparsable URL>"
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
        } catch let error as HTTPClientError
            where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
        {
            throw ShareDeliveryError("POST \(redactedURL) timed out after \(milliseconds) ms")
        } catch {
            throw ShareDeliveryError("POST \(redactedURL) failed: \(error)")
        }
        // Read (a bounded part of) the body so the connection can be reused, and keep a hint for the error.
        let body = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
        let code = response.status.code
        if (300..<400).contains(code) {
            throw ShareDeliveryError("POST \(redactedURL): webhook answered \(code) (redirects are not followed)")
        }
        guard (200..<300).contains(code) else {
            let hint = body.prefix(200).trimmingCharacters(in: .whitespacesAndNewlines)
            throw ShareDeliveryError(
                "POST \(redactedURL) answered \(code) \(response.status.reasonPhrase)\(hint.isEmpty ? "" : ": \(hint)")"
            )
        }
    }
}
