import GRDB
import WorkoutEngine

extension DatabaseWriter {
    /// `body` in one write transaction on the writer connection, for a device's commit: the path every
    /// acknowledged command takes, on the writer's thread.
    ///
    /// Why not GRDB's `write` (issue 31): it parses `BEGIN` and `COMMIT` anew each time and keeps a savepoint
    /// stack and transaction observers this store never uses; here both are statements compiled once per
    /// connection. `BEGIN IMMEDIATE` takes the write lock at once (this connection is the only writer, so it
    /// never waits for it). A failure anywhere rolls the transaction back when SQLite has not already (an I/O
    /// error in `COMMIT` may leave it open) and surfaces as ``StorageUnavailableError``.
    /// `afterCommit` runs once the transaction committed, still on the writer connection, and cannot fail it.
    func commitOrUnavailable<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T, then afterCommit: @escaping @Sendable (Database, inout T) -> Void
    ) async throws -> T {
        do {
            return try await writeWithoutTransaction { db in try Self.transaction(in: db, body, then: afterCommit) }
        } catch {
            throw StorageUnavailableError(reason: SQLiteWorkoutStore.describe(error))
        }
    }

    /// ``commitOrUnavailable(_:)`` on the calling thread, which waits while another access holds the writer.
    func commitNowOrUnavailable<T>(_ body: (Database) throws -> T, then afterCommit: (Database, inout T) -> Void) throws -> T {
        do {
            return try writeWithoutTransaction { db in try Self.transaction(in: db, body, then: afterCommit) }
        } catch {
            throw StorageUnavailableError(reason: SQLiteWorkoutStore.describe(error))
        }
    }

    private static func transaction<T>(
        in db: Database, _ body: (Database) throws -> T, then afterCommit: (Database, inout T) -> Void
    ) throws -> T {
        var begin = BoundStatement(try db.cachedStatement(sql: "BEGIN IMMEDIATE"))
        try begin.run(in: db)
        do {
            var result = try body(db)
            var commit = BoundStatement(try db.cachedStatement(sql: "COMMIT"))
            try commit.run(in: db)
            afterCommit(db, &result)
            return result
        } catch {
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
            throw error
        }
    }
}
