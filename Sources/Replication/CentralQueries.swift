import Logging
import PostgresNIO

/// The connection was found closed before a transaction began.
struct CentralConnectionClosedError: Error, CustomStringConvertible {
    var description: String { "connection failed: the server closed the connection" }
}

extension PostgresConnection {
    /// A query that fails, rather than waits for ever, when the server has already closed the connection.
    ///
    /// Why: postgres-nio 1.33.2 writes a query with no write promise. Once a closed channel's pipeline is
    /// torn down, a query written to it is dropped unanswered and its await ignores cancellation. The
    /// server dying between two queries of a batch (its FATAL and FIN arrive while we prepare the next one)
    /// is enough. Checked right before the write, the close is either seen here or still ahead of the write
    /// on the event loop, where the handler fails the query properly. The shipper's deadline is the backstop.
    @discardableResult
    func queryUnlessClosed(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw CentralConnectionClosedError() }
        return try await self.query(query, logger: logger)
    }

    /// BEGIN, `body`, COMMIT; on any error the connection is closed.
    ///
    /// Closing makes the server abort the transaction.
    ///
    /// Why not postgres-nio's `withTransaction`: on an error it sends ROLLBACK on the same connection, and
    /// when the error was the server going away (`pg_ctl stop -m immediate`, a restart), that ROLLBACK is
    /// written to a channel whose pipeline is already torn down. Its reply never comes and the await does
    /// not react to cancellation (postgres-nio 1.33.2 writes queries without a write promise), so shipping
    /// stalled for good while the status still said "connected".
    func inCentralTransaction<T: Sendable>(
        logger: Logger,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            try await queryUnlessClosed("BEGIN", logger: logger)
            let value = try await body(self)
            try await queryUnlessClosed("COMMIT", logger: logger)
            return value
        } catch {
            closeInBackground()
            throw error
        }
    }

    /// Closes without waiting, and keeps the connection alive until the channel is closed.
    ///
    /// `close()` only starts the closing, and postgres-nio asserts that a connection is closed before it is deinitialised
    /// (a debug daemon crashed when the last reference went right after close()).
    func closeInBackground() {
        close().whenComplete { _ in withExtendedLifetime(self) {} }
    }
}

extension PostgresConnection {
    /// Whether the server takes writes now: `SHOW transaction_read_only` is `off`.
    ///
    /// It is `on` on a standby in recovery and on a server with `default_transaction_read_only`. A plain query with no
    /// session state and no named statement, so it answers the same through a pooler in transaction mode.
    func acceptsWrites(logger: Logger) async throws -> Bool {
        let rows = try await queryUnlessClosed("SHOW transaction_read_only", logger: logger)
        // Read to the end, so the connection is ready for the next query.
        var readOnly: String?
        for try await value in rows.decode(String.self) { readOnly = value }
        return readOnly == "off"
    }
}

/// No host of `replication.postgres_url` could be used.
///
/// Each one's reason, in the order they were tried.
struct NoUsableHostError: Error, CustomStringConvertible {
    var failures: [(host: String, reason: String)]
    var needsWrites: Bool

    var description: String {
        let reasons = failures.map { "\($0.host): \($0.reason)" }.joined(separator: "; ")
        return "\(needsWrites ? "no host accepts writes" : "no host can be reached"): \(reasons)"
    }
}

/// The server behind a connection is read-only (a standby), so the next host of the list is tried.
struct ReadOnlyServerError: Error, CustomStringConvertible {
    var description: String {
        "read-only (a standby in recovery, or default_transaction_read_only is on); target_session_attrs=read-write passes it over"
    }
}
