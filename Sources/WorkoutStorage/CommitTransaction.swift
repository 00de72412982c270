import GRDB
import WorkoutEngine

extension Database {
    /// `body` in one write transaction on the writer connection, for a device's commit.
    ///
    /// The path every acknowledged command takes. `afterCommit` runs once the transaction committed, and cannot fail
    /// it.
    ///
    /// Why not GRDB's `write`: it parses `BEGIN` and `COMMIT` anew each time and keeps a savepoint
    /// stack and transaction observers this store never uses; here both are statements compiled once per
    /// connection. `BEGIN IMMEDIATE` takes the write lock at once (this connection is the only writer, so it
    /// never waits for it). A failure anywhere rolls the transaction back when SQLite has not already (an I/O
    /// error in `COMMIT` may leave it open) and surfaces as ``StorageUnavailableError``.
    func commitOrUnavailable<T>(
        _ body: (Database) throws -> T,
        then afterCommit: (Database, inout T) -> Void
    ) throws -> T {
        do {
            var begin = BoundStatement(try cachedStatement(sql: "BEGIN IMMEDIATE"))
            try begin.run(in: self)
            do {
                var result = try body(self)
                var commit = BoundStatement(try cachedStatement(sql: "COMMIT"))
                try commit.run(in: self)
                afterCommit(self, &result)
                return result
            } catch {
                if isInsideTransaction { try? execute(sql: "ROLLBACK") }
                throw error
            }
        } catch {
            throw StorageUnavailableError(reason: SQLiteWorkoutStore.describe(error))
        }
    }
}
