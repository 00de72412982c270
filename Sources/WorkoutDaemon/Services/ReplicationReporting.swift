import ControlProtocol
import Replication

extension ReplicationShipper {
    /// The `status` view of replication: the shipper's state and the store's live pending count.
    func report() async -> ReplicationReport {
        let snapshot = status.current
        return ReplicationReport(
            state: snapshot.state.rawValue,
            since: snapshot.since,
            pending: (try? await pendingCount()) ?? -1,
            lastShippedAt: snapshot.lastShippedAt,
            lastError: snapshot.lastError,
            hubID: snapshot.hubID,
            server: snapshot.server,
            connections: snapshot.connections,
            maxConnections: snapshot.maxConnections,
            serverIdentity: snapshot.serverIdentity,
            centralHost: snapshot.centralHost
        )
    }
}
