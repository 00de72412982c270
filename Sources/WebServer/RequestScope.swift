import NIOCore

/// What a request's handlers know about where it came from, beyond the request itself.
///
/// The API's handlers (generated from `openapi.yaml`) get no request context, so the event stream learns its client,
/// its connection and its session from here.
enum RequestScope {
    struct Connection: Sendable {
        /// Whose request it is (what the stream caps count).
        var client: ClientAddress
        /// Completed when the connection closes: a stream on it ends then, at once.
        var closed: EventLoopFuture<Void>
    }

    @TaskLocal static var connection: Connection?
    /// The session the request was admitted by; nil on loopback and for a bearer token.
    @TaskLocal static var session: WebSessions.Admission?
}
