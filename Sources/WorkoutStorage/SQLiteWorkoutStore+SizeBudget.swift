import GRDB

/// `storage.max_database_bytes`: the pages in use against the budget, and the refusal of new workouts.
extension SQLiteWorkoutStore {
    public var refusesNewWorkouts: Bool { overBudget.load(ordering: .relaxed) }

    /// A reload's `storage.max_database_bytes` (0: none), compared with the size at once.
    ///
    /// Refused workouts commit nothing, so a full hub would otherwise wait for some other commit to see a raised
    /// budget.
    public func update(maximumDatabaseBytes: Int64) {
        maximumBytes.store(maximumDatabaseBytes, ordering: .relaxed)
        measureSize()
    }

    /// Measures the database again (after a reload, and after pruning freed pages).
    ///
    /// The next commit measures too.
    func measureSize() {
        sizeWatch.forget()
        if let bytes = try? database.read({ db in try Self.bytesInUse(db) }) { recordSize(bytes) }
    }

    /// The pages holding data (free pages are reused before the file grows), in bytes. The WAL is not counted:
    /// checkpoints keep it under `journal_size_limit` (4 MiB).
    static func bytesInUse(_ db: Database) throws -> Int64 {
        let (pages, pageSize) = try pagesInUse(db)
        return pages * pageSize
    }

    /// Three plain pragmas, each a statement of one opcode.
    ///
    /// The table-valued `pragma_page_count()` form sets up a virtual table each time. SQLite compiles each anew on
    /// every run, so commits run them only when ``DatabaseSizeWatch`` says the budget could be reached.
    static func pagesInUse(_ db: Database) throws -> (pages: Int64, pageSize: Int64) {
        var pages = BoundStatement(try db.cachedStatement(sql: "PRAGMA page_count"))
        var free = BoundStatement(try db.cachedStatement(sql: "PRAGMA freelist_count"))
        var pageSize = BoundStatement(try db.cachedStatement(sql: "PRAGMA page_size"))
        return (try pages.integer(in: db) - (try free.integer(in: db)), try pageSize.integer(in: db))
    }

    func recordSize(_ bytes: Int64) {
        let budget = maximumBytes.load(ordering: .relaxed)
        overBudget.store(budget > 0 && bytes >= budget, ordering: .relaxed)
    }
}
