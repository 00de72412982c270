import Logging
import PostgresNIO

/// The central database's tables, created and migrated by the daemon itself.
///
/// They live in the URL's database and default schema. Append migrations; never edit a shipped one.
enum CentralSchema {
    /// The newest version this daemon knows; a database at a newer one is refused, not written.
    static let currentVersion = 3

    /// Serialises migrations when many hubs start at once (`pg_advisory_xact_lock`; "WKOD").
    static let migrationLockKey: Int64 = 0x574B_4F44

    static let migrations: [[String]] = [
        // 1: workouts, shares, hubs.
        [
            """
            CREATE TABLE IF NOT EXISTS workouts (
                hub_id text NOT NULL,
                workout_id bigint NOT NULL,
                device_id text NOT NULL,
                location text NOT NULL,
                intensity_level int NOT NULL,
                date timestamptz NOT NULL,
                started_at timestamptz NOT NULL,
                ended_at timestamptz,
                duration_seconds double precision,
                PRIMARY KEY (hub_id, workout_id)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS shares (
                hub_id text NOT NULL,
                share_id bigint NOT NULL,
                workout_id bigint NOT NULL,
                service text NOT NULL,
                queued_at timestamptz NOT NULL,
                PRIMARY KEY (hub_id, share_id)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hubs (
                hub_id text PRIMARY KEY,
                last_seen timestamptz,
                software_version text
            )
            """,
        ],
        // 2: the clock mark of workouts timed before the hub's clock was synchronised (NULL: synchronised).
        [
            "ALTER TABLE workouts ADD COLUMN IF NOT EXISTS clock_mark text"
        ],
        // 3: what each hub reports of itself every `replication.heartbeat_interval_s`, for the fleet page.
        [
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS name text",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS architecture text",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS started_at timestamptz",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS heartbeat_interval_s int",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS wearables_connected int",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS active_workouts int",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS backlog bigint",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS last_error text",
            "ALTER TABLE hubs ADD COLUMN IF NOT EXISTS central_host text",
        ],
    ]

    /// Brings the schema to ``currentVersion`` in one transaction, or throws ``CentralSchemaTooNewError``.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.inCentralTransaction(logger: logger) { connection in
            try await connection.queryUnlessClosed("SELECT pg_advisory_xact_lock(\(migrationLockKey))", logger: logger)
            try await connection.queryUnlessClosed(
                "CREATE TABLE IF NOT EXISTS workoutd_schema (version int NOT NULL)",
                logger: logger
            )
            var found = 0
            for try await version in try await connection.queryUnlessClosed(
                "SELECT COALESCE(MAX(version), 0) FROM workoutd_schema",
                logger: logger
            ).decode(Int.self) {
                found = version
            }
            guard found <= currentVersion else { throw CentralSchemaTooNewError(found: found, known: currentVersion) }
            for version in stride(from: found + 1, through: currentVersion, by: 1) {
                for statement in migrations[version - 1] {
                    try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.queryUnlessClosed(
                    "INSERT INTO workoutd_schema (version) VALUES (\(version))",
                    logger: logger
                )
                logger.info("central schema migrated", metadata: ["version": "\(version)"])
            }
        }
    }
}

public struct CentralSchemaTooNewError: Error, Sendable, CustomStringConvertible {
    public var found: Int
    public var known: Int
    public var description: String {
        "the central schema is at version \(found), newer than this daemon knows (\(known)); upgrade workoutd on this hub"
    }
}
