import CPosixTTY
import ControlProtocol
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One control connection's peer and what it may do.
///
/// Its credentials are read (`SO_PEERCRED`) as it is accepted; the decision, which may need the user database, is made
/// off the event loop at its first request and kept for the connection's life.
final class PeerAccess: Sendable {
    /// A refusal, and whether the connection is closed after it (a peer that may do nothing).
    struct Refusal: Sendable {
        var error: ControlError
        var closesConnection: Bool
    }

    private let credentials: EventLoopFuture<wd_peer_credentials>?
    private let authorization: ControlAuthorization
    private let logger: Logger
    private let decided = Mutex<ControlAccess?>(nil)

    /// Reads the peer credentials of `channel` (a connected Unix socket).
    init(channel: any Channel, authorization: ControlAuthorization, logger: Logger) {
        let provider = channel as? any SocketOptionProvider
        credentials = provider?.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: CInt(SOL_SOCKET)),
            name: NIOBSDSocket.Option(rawValue: CInt(SO_PEERCRED))
        )
        self.authorization = authorization
        self.logger = logger
    }

    /// Nil when the peer may make a request of `method`; otherwise the typed refusal.
    func check(_ method: ControlMethod) async -> Refusal? {
        guard let credentials, let peer = try? await credentials.get() else {
            // Without credentials nobody can be told apart: refuse.
            return Refusal(
                error: ControlError(.permissionDenied, "permission denied: the peer's credentials could not be read"),
                closesConnection: true
            )
        }
        let access = decided.withLock { $0 } ?? decide(peer)
        guard access < method.requiredAccess else { return nil }
        return Refusal(
            error: authorization.denial(to: peer, having: access, asking: method),
            closesConnection: access == .none
        )
    }

    private func decide(_ peer: wd_peer_credentials) -> ControlAccess {
        let access = authorization.access(for: peer)
        decided.withLock { $0 = access }
        if access == .none {
            logger.notice(
                "refusing control client: permission denied",
                metadata: [
                    "uid": "\(peer.uid)", "gid": "\(peer.gid)", "pid": "\(peer.pid)",
                ]
            )
        }
        return access
    }
}
