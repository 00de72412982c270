import Foundation
import Logging
import PostgresNIO

/// What the daemon knows of its devices, for the heartbeat; nil where it does not know.
///
/// The daemon's assembly provides it: Replication knows nothing of serial devices or sessions.
public struct HubActivity: Sendable, Equatable {
    public var wearablesConnected: Int?
    public var activeWorkouts: Int?

    public init(wearablesConnected: Int? = nil, activeWorkouts: Int? = nil) {
        self.wearablesConnected = wearablesConnected
        self.activeWorkouts = activeWorkouts
    }
}

/// The hub's row of the central `hubs` table.
///
/// Written every ``ReplicationConfiguration/heartbeatInterval``.
///
/// One statement on the shipper's own connection, between batches: a heartbeat costs the server no connection of its
/// own, and it takes no session state (it runs through a pooler in transaction mode like the batches do).
struct HubHeartbeat: Sendable {
    var hubID: String
    var name: String
    var softwareVersion: String
    var architecture: String?
    var startedAt: Date
    var intervalSeconds: Int
    var activity: HubActivity
    var backlog: Int
    var lastError: String?

    /// The upsert; `last_seen` is the server's clock, not the hub's.
    ///
    /// The fleet page compares it with the server's `now()`, and a
    /// hub whose clock is not synchronised (a Pi without its network time yet) would otherwise look offline, or online
    /// for ever. `central_host` is the address of the server that took the write (NULL over a unix socket): behind a
    /// pooler or after a failover, that is the database server itself.
    var query: PostgresQuery {
        """
        INSERT INTO hubs (hub_id, name, software_version, architecture, started_at, heartbeat_interval_s, last_seen,
                          wearables_connected, active_workouts, backlog, last_error, central_host)
        VALUES (\(hubID), \(name), \(softwareVersion), \(architecture), \(startedAt), \(intervalSeconds), clock_timestamp(),
                \(activity.wearablesConnected), \(activity.activeWorkouts), \(Int64(backlog)), \(lastError),
                host(inet_server_addr()) || ':' || inet_server_port())
        ON CONFLICT (hub_id) DO UPDATE SET
            name = excluded.name, software_version = excluded.software_version, architecture = excluded.architecture,
            started_at = excluded.started_at, heartbeat_interval_s = excluded.heartbeat_interval_s,
            last_seen = excluded.last_seen, wearables_connected = excluded.wearables_connected,
            active_workouts = excluded.active_workouts, backlog = excluded.backlog, last_error = excluded.last_error,
            central_host = excluded.central_host
        """
    }

    /// The machine's architecture as `uname -m` names it (`x86_64`, `aarch64`).
    static let machineArchitecture: String? = {
        var name = utsname()
        guard uname(&name) == 0 else { return nil }
        let text = withUnsafeBytes(of: &name.machine) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? nil : text
    }()

    /// `error` stamped with its time, without the password.
    ///
    /// For the central table, which the fleet reads.
    ///
    /// The shipper's error texts name no password, but a server's message may quote what it was given; the password is
    /// cut out wherever it appears, and so is the password part of any URL.
    static func redacted(_ error: String, at date: Date, password: String?) -> String {
        var text = error
        if let password, !password.isEmpty { text = text.replacingOccurrences(of: password, with: "***") }
        text = text.replacingOccurrences(
            of: #"(postgres(?:ql)?://[^:/@\s]*):[^@\s]*@"#,
            with: "$1:***@",
            options: .regularExpression
        )
        return "\(date.formatted(.iso8601)) \(text)"
    }
}
