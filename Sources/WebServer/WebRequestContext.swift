import Hummingbird
import NIOCore

/// Hummingbird's per-request context, with the peer's address (for the login throttle).
struct WebRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text (no port): what failed logins are counted by.
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
