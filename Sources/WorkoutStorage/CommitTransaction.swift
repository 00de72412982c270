import GRDB
import WorkoutEngine

extension DatabaseWriter {
    /// `body` in one write transaction on the writer connection, for a device's commit: the path every
    /// acknowledged command takes.
    ///
    /// Why not GRDB's `write` (issue 31): it parses `BEGIN` and `COMMIT` anew each time and keeps a savepoint
    /// stack and transaction observers this store never uses; here both are statements compiled once per
    /// connection. `BEGIN IMMEDIATE` takes the write lock at once (this connection is the only writer, so it
    /// never waits for it). A failure anywhere rolls the transaction back when SQLite has not already (an I/O
    /// error in `COMMIT` may leave it open) and surfaces as ``StorageUnavailableError``.
    func commitOrUnavailable<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writeWithoutTransaction { db in
                var begin = BoundStatement(try db.cachedStatement(sql: "BEGIN IMMEDIATE"))
                try begin.run(in: db)
                do {
                    let result = try body(db)
                    var commit = BoundStatement(try db.cachedStatement(sql: "COMMIT"))
                    try commit.run(in: db)
                    return result
                } catch {
                    if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
                    throw error
                }
            }
        } catch {
            throw StorageUnavailableError(reason: SQLiteWorkoutStore.describe(error))
        }
    }
}
