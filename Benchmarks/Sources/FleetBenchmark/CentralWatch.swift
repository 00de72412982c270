import Foundation
import Logging
import NIOPosix
import PostgresNIO

/// The driver's own look at the central database.
///
/// Which workouts have arrived, and what the server is doing.
///
/// It connects to the server directly as the superuser, never through the pooler, so watching adds no client to
/// the pool it measures.
final class CentralWatch {
    private let connection: PostgresConnection
    private let logger = Logger(label: "fleet-benchmark.watch")

    /// `place` is `SOCKET-DIRECTORY:PORT`.
    init(place: String) async throws {
        guard let colon = place.lastIndex(of: ":"), let port = Int(place[place.index(after: colon)...]) else {
            throw FleetError("a watch place is SOCKET-DIRECTORY:PORT, not \(place)")
        }
        var configuration = PostgresConnection.Configuration(
            unixSocketPath: "\(place[..<colon])/.s.PGSQL.\(port)",
            username: "postgres",
            password: nil,
            database: "gym"
        )
        configuration.options.connectTimeout = .seconds(10)
        connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: configuration,
            id: 1,
            logger: logger
        )
    }

    func close() async {
        try? await connection.close()
    }

    /// Which of `workouts` (hub id, workout id) are in the central `workouts` table now.
    func arrived(_ workouts: [WorkoutKey]) async throws -> [WorkoutKey] {
        guard !workouts.isEmpty else { return [] }
        let hubs = workouts.map(\.hubID)
        let ids = workouts.map(\.workoutID)
        let rows = try await connection.query(
            """
            SELECT w.hub_id, w.workout_id FROM workouts w
            JOIN unnest(\(hubs)::text[], \(ids)::bigint[]) AS wanted(hub_id, workout_id)
              ON w.hub_id = wanted.hub_id AND w.workout_id = wanted.workout_id
            """,
            logger: logger
        )
        var found: [WorkoutKey] = []
        for try await (hub, id) in rows.decode((String, Int64).self) {
            found.append(WorkoutKey(hubID: hub, workoutID: id))
        }
        return found
    }

    /// Every workout in the central database, for the final count.
    func allWorkouts() async throws -> [WorkoutKey] {
        var found: [WorkoutKey] = []
        let rows = try await connection.query("SELECT hub_id, workout_id FROM workouts", logger: logger)
        for try await (hub, id) in rows.decode((String, Int64).self) {
            found.append(WorkoutKey(hubID: hub, workoutID: id))
        }
        return found
    }

    /// Backends serving the hubs' role (`workoutd`): the server connections the fleet costs.
    func serverConnections() async throws -> Int {
        try await single(
            "SELECT count(*)::bigint FROM pg_stat_activity WHERE usename = 'workoutd' AND backend_type = 'client backend'"
        )
    }

    /// Rows written to `table` since the server started (inserts and updates).
    func rowsWritten(to table: String) async throws -> Int {
        try await single(
            "SELECT COALESCE(sum(n_tup_ins + n_tup_upd), 0)::bigint FROM pg_stat_user_tables WHERE relname = \(table)"
        )
    }

    /// Transactions committed in the fleet's database since the server started.
    func commits() async throws -> Int {
        try await single("SELECT xact_commit FROM pg_stat_database WHERE datname = 'gym'")
    }

    /// Hubs whose row (heartbeat) is in the `hubs` table.
    func hubRows() async throws -> Int {
        try await single("SELECT count(*)::bigint FROM hubs")
    }

    private func single(_ query: PostgresQuery) async throws -> Int {
        for try await value in try await connection.query(query, logger: logger).decode(Int64.self) {
            return Int(value)
        }
        return 0
    }
}

struct WorkoutKey: Hashable, Sendable {
    var hubID: String
    var workoutID: Int64
}

struct FleetError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
