import ControlProtocol

/// Where the control socket lives and how much any one client may cost the daemon.
public struct ControlServerOptions: Sendable, Hashable {
    public var path: String
    /// Owner and group may connect; what each peer may do is decided by ``authorization``, not by the mode.
    public var mode: UInt32
    /// Who may read and who may `send`, by peer credentials; the socket file is given the reader group.
    public var authorization: ControlAuthorization
    public var maximumClients: Int
    /// A client whose socket stays full this long is dropped.
    public var unwritableTimeout: Duration
    /// Replies and events waiting for one client beyond this get it dropped at once.
    public var maximumBufferedBytes: Int

    public init(
        path: String = ControlSocket.defaultPath,
        mode: UInt32 = 0o660,
        authorization: ControlAuthorization = ControlAuthorization(),
        maximumClients: Int = 32,
        unwritableTimeout: Duration = .seconds(2),
        maximumBufferedBytes: Int = 1 << 20
    ) {
        self.path = path
        self.mode = mode
        self.authorization = authorization
        self.maximumClients = maximumClients
        self.unwritableTimeout = unwritableTimeout
        self.maximumBufferedBytes = maximumBufferedBytes
    }
}
