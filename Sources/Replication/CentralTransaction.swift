import Logging
import PostgresNIO

/// The connection was found closed before a transaction began.
struct CentralConnectionClosedError: Error, CustomStringConvertible {
    var description: String { "connection failed: the server closed the connection" }
}

extension PostgresConnection {
    /// BEGIN, `body`, COMMIT; on any error the connection is closed, which makes the server abort the
    /// transaction.
    ///
    /// Why not postgres-nio's `withTransaction`: on an error it sends ROLLBACK on the same connection, and
    /// when the error was the server going away (`pg_ctl stop -m immediate`, a restart), that ROLLBACK is
    /// written to a channel whose pipeline is already torn down. Its reply never comes and the await does
    /// not react to cancellation (postgres-nio 1.33.2 writes queries without a write promise), so shipping
    /// stalled for good while the status still said "connected".
    func inCentralTransaction<T: Sendable>(
        logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard !isClosed else { throw CentralConnectionClosedError() }
        do {
            try await query("BEGIN", logger: logger)
            let value = try await body(self)
            try await query("COMMIT", logger: logger)
            return value
        } catch {
            close().whenComplete { _ in }
            throw error
        }
    }
}
