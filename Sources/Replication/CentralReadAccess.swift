import Logging
import PostgresNIO

/// The central database for a reader that is not a hub: the fleet page (`workoutd fleet`), and tests.
///
/// The same URL, TLS, password guard and password sources the shipper uses, so a reader's link is secured exactly as a
/// hub's is, and nothing about the link is written twice.
extension ReplicationConfiguration {
    /// A new connection, opened and secured like a hub's, authenticated with the password as it reads now.
    ///
    /// With several hosts, the first that answers: a reader needs no writes, so a standby serves it as well.
    public func openCentralConnection(id: Int = 1, logger: Logger) async throws -> PostgresConnection {
        let password = try readPassword()
        var lastError: (any Error)?
        for endpoint in endpoints {
            do {
                return try await connect(to: endpoint, password: password, id: id, logger: logger)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ReplicationConfigurationError("names no host")
    }
}

/// The central schema's version, as readers check it.
public enum CentralSchemaVersion {
    /// The newest version this build knows.
    public static var known: Int { CentralSchema.currentVersion }

    /// Brings the schema to ``known`` as a hub does at start (tests make their central database with it).
    public static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await CentralSchema.migrate(connection, logger: logger)
    }
}
