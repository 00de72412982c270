import Foundation
import Logging
import PostgresNIO
import Replication

/// The fleet page's link to the central database: one connection, read only.
///
/// It is opened and secured as a hub opens its own.
///
/// It only ever runs SELECT, so a role with SELECT on `hubs`, `workouts`, `shares` and `workoutd_schema` is all it
/// needs. It never migrates: a hub does that. A connection is checked for a schema this build knows before it is
/// used, and opened again after it failed.
public actor FleetDatabase {
    private let configuration: ReplicationConfiguration
    private let logger: Logger
    private var connection: PostgresConnection?
    private var nextID = 1

    public init(configuration: ReplicationConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Where it reads from, never with the password.
    public nonisolated var server: String { configuration.redactedDescription }

    /// Connects and checks the schema: what `workoutd fleet` does before it listens.
    public func check() async throws(FleetDatabaseError) {
        _ = try await ready()
    }

    /// The hubs as the central database knows them, by hub id.
    ///
    /// `dayStart` is when "today" began where the page is read.
    func hubs(dayStart: Date) async throws(FleetDatabaseError) -> [FleetHub] {
        let query: PostgresQuery = """
            SELECT h.hub_id, h.name, h.software_version, h.architecture, h.started_at, h.last_seen,
                h.heartbeat_interval_s::bigint AS heartbeat_interval_s,
                COALESCE(h.last_seen >= now() - make_interval(secs => 3 * COALESCE(h.heartbeat_interval_s, \(FleetHub.defaultHeartbeatSeconds))), false) AS online,
                h.wearables_connected::bigint AS wearables_connected, h.active_workouts::bigint AS active_workouts,
                h.backlog, h.last_error, h.central_host,
                (SELECT count(*) FROM workouts w WHERE w.hub_id = h.hub_id AND w.started_at >= \(dayStart)) AS workouts_today
            FROM hubs h ORDER BY h.hub_id LIMIT \(FleetHub.maximumListed)
            """
        return try await rows(query) { row in
            FleetHub(
                hubID: try row["hub_id"].decode(String.self),
                name: try row["name"].decode(String?.self),
                version: try row["software_version"].decode(String?.self),
                architecture: try row["architecture"].decode(String?.self),
                startedAt: try row["started_at"].decode(Date?.self),
                lastSeen: try row["last_seen"].decode(Date?.self),
                heartbeatIntervalSeconds: try row["heartbeat_interval_s"].decode(Int?.self),
                online: try row["online"].decode(Bool.self),
                wearablesConnected: try row["wearables_connected"].decode(Int?.self),
                activeWorkouts: try row["active_workouts"].decode(Int?.self),
                backlog: try row["backlog"].decode(Int?.self),
                lastError: try row["last_error"].decode(String?.self),
                centralHost: try row["central_host"].decode(String?.self),
                workoutsToday: try row["workouts_today"].decode(Int.self)
            )
        }
    }

    /// Workouts of every hub, or of `filter.hub`, newest first, at most `filter.limit`.
    func workouts(_ filter: FleetWorkoutFilter) async throws(FleetDatabaseError) -> [FleetWorkout] {
        let query: PostgresQuery = """
            SELECT hub_id, workout_id, device_id, location, intensity_level::bigint AS intensity_level, date,
                started_at, ended_at, duration_seconds, clock_mark
            FROM workouts
            WHERE (\(filter.hub)::text IS NULL OR hub_id = \(filter.hub))
                AND (\(filter.since)::timestamptz IS NULL OR started_at >= \(filter.since))
                AND (\(filter.until)::timestamptz IS NULL OR started_at < \(filter.until))
            ORDER BY started_at DESC, hub_id, workout_id DESC
            LIMIT \(filter.limit)
            """
        return try await rows(query) { row in
            FleetWorkout(
                hubID: try row["hub_id"].decode(String.self),
                workoutID: try row["workout_id"].decode(Int64.self),
                deviceID: try row["device_id"].decode(String.self),
                location: try row["location"].decode(String.self),
                intensityLevel: try row["intensity_level"].decode(Int.self),
                date: try row["date"].decode(Date.self),
                startedAt: try row["started_at"].decode(Date.self),
                endedAt: try row["ended_at"].decode(Date?.self),
                durationSeconds: try row["duration_seconds"].decode(Double?.self),
                clockMark: try row["clock_mark"].decode(String?.self)
            )
        }
    }

    /// Runs `query` and turns each row into a value; a connection that failed is dropped for the next call.
    private func rows<T: Sendable>(
        _ query: PostgresQuery,
        _ make: @Sendable (PostgresRandomAccessRow) throws -> T
    ) async throws(FleetDatabaseError) -> [T] {
        let connection = try await ready()
        do {
            var values: [T] = []
            for try await row in try await connection.query(query, logger: logger) {
                values.append(try make(row.makeRandomAccess()))
            }
            return values
        } catch {
            if connection.isClosed { drop(connection) }
            throw FleetDatabaseError.describing(error, server: server)
        }
    }

    private func drop(_ old: PostgresConnection) {
        if connection === old {
            connection = nil
            old.close().whenComplete { _ in withExtendedLifetime(old) {} }
        }
    }

    /// The open connection, or a new one whose schema was checked.
    private func ready() async throws(FleetDatabaseError) -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        if let old = connection { drop(old) }
        let id = nextID
        nextID += 1
        let opened: PostgresConnection
        do {
            opened = try await configuration.openCentralConnection(id: id, logger: logger)
        } catch {
            throw FleetDatabaseError.describing(error, server: server)
        }
        do {
            try await checkSchema(opened)
        } catch {
            opened.close().whenComplete { _ in withExtendedLifetime(opened) {} }
            throw error
        }
        connection = opened
        return opened
    }

    /// Refuses a schema this build cannot read.
    ///
    /// It reads version 3 (the hubs' heartbeat columns) up to the newest it knows.
    private func checkSchema(_ connection: PostgresConnection) async throws(FleetDatabaseError) {
        var version = 0
        do {
            for try await found in try await connection.query(
                "SELECT COALESCE(MAX(version), 0) FROM workoutd_schema",
                logger: logger
            ).decode(Int.self) {
                version = found
            }
        } catch {
            throw FleetDatabaseError.describing(error, server: server)
        }
        if version < FleetDatabaseError.oldestReadable {
            throw FleetDatabaseError(
                message:
                    "the central schema at \(server) is at version \(version); the fleet page needs \(FleetDatabaseError.oldestReadable) to \(CentralSchemaVersion.known). A hub of this version migrates it when it connects (the fleet page never writes)"
            )
        }
        if version > CentralSchemaVersion.known {
            throw FleetDatabaseError(
                message:
                    "the central schema at \(server) is at version \(version), newer than this workoutd knows (\(CentralSchemaVersion.known)); upgrade workoutd where the fleet page runs"
            )
        }
    }
}

/// What went wrong reading the central database, in words an operator can act on.
public struct FleetDatabaseError: Error, Sendable, CustomStringConvertible {
    /// The first schema version with the hubs' heartbeat columns.
    static let oldestReadable = 3

    public var message: String
    public var description: String { message }

    static func describing(_ error: any Error, server: String) -> FleetDatabaseError {
        if let error = error as? FleetDatabaseError { return error }
        if let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] {
            let detail = error.serverInfo?[.message] ?? ""
            switch state {
            case "42P01":
                return FleetDatabaseError(
                    message:
                        "the central tables are missing at \(server) (\(detail)): no hub has connected to this database yet, or the URL names the wrong one. A hub creates them when it first connects; the fleet page only reads"
                )
            case "42501":
                return FleetDatabaseError(
                    message:
                        "permission denied at \(server) (\(detail)): the fleet page's role needs SELECT on hubs, workouts, shares and workoutd_schema (docs/operations.md, Fleet page)"
                )
            default:
                return FleetDatabaseError(message: "the central database at \(server) answered \(state): \(detail)")
            }
        }
        return FleetDatabaseError(message: "the central database at \(server) cannot be read: \(error)")
    }
}
