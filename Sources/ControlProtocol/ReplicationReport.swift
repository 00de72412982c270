import Foundation

/// The `replication` part of `status`.
///
/// Whether the hub ships to the central database, and how far behind it is.
///
/// Keys are snake_case (`state`, `pending`, `last_shipped_at`, …): scripts read them by these names.
public struct ReplicationReport: Codable, Hashable, Sendable {
    /// `connected` or `disconnected`.
    public var state: String
    /// When the state last changed.
    public var since: Date
    /// Changes committed locally and not yet in the central database.
    public var pending: Int
    public var lastShippedAt: Date?
    public var lastError: String?
    public var hubID: String
    /// The server, with any password redacted.
    public var server: String
    /// Connections to the server open now, and the most this hub opens (`replication.max_connections`).
    public var connections: Int
    public var maxConnections: Int
    /// Whether the server proved who it is.
    ///
    /// `verified` (its certificate checked), `unverified` (sslmode `require` or `disable`: anyone on the path could
    /// pose as it) or `local` (a unix socket). Absent from older daemons.
    public var serverIdentity: String?
    /// The host the connections go to now, `host:port` or a socket's path.
    ///
    /// With several hosts in `replication.postgres_url`, the one that accepted writes. Absent while disconnected and
    /// from older daemons.
    public var centralHost: String?

    public init(
        state: String,
        since: Date,
        pending: Int,
        lastShippedAt: Date?,
        lastError: String?,
        hubID: String,
        server: String,
        connections: Int,
        maxConnections: Int,
        serverIdentity: String? = nil,
        centralHost: String? = nil
    ) {
        self.serverIdentity = serverIdentity
        self.centralHost = centralHost
        self.state = state
        self.since = since
        self.pending = pending
        self.lastShippedAt = lastShippedAt
        self.lastError = lastError
        self.hubID = hubID
        self.server = server
        self.connections = connections
        self.maxConnections = maxConnections
    }

    enum CodingKeys: String, CodingKey {
        case state, since, pending, server, connections
        case maxConnections = "max_connections"
        case lastShippedAt = "last_shipped_at"
        case lastError = "last_error"
        case hubID = "hub_id"
        case serverIdentity = "server_identity"
        case centralHost = "central_host"
    }
}
