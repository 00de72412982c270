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

    /// Who the client is, as failed logins are counted: its IPv4 address or its IPv6 /64.
    var client: ClientAddress { ClientAddress(remoteAddress) }
}
