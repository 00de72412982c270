import GRDB
import GRDBSQLite

/// One of GRDB's cached statements, its values bound and its steps run straight through SQLite's C API.
///
/// Why: a commit runs one or two statements per command, and GRDB's `StatementArguments` boxes every value as
/// an existential and converts it to a `DatabaseValue` before binding it. In a pipelined profile that took more
/// of the writer thread's time than SQLite's own work on those statements. The statement
/// stays GRDB's (compiled once per connection, finalized with it); only binding and stepping skip GRDB, which
/// is sound for the commit's statements inside its transaction (``GRDB/Database/commitOrUnavailable(_:then:)``):
/// this store registers no transaction observers that GRDB's bookkeeping would have to tell, and a failure
/// still throws out of the transaction's closure, which rolls it back.
struct BoundStatement {
    private let handle: SQLiteStatement
    private var position: Int32 = 0

    init(_ statement: Statement) {
        handle = statement.sqliteStatement
    }

    mutating func bind(_ value: Int64?) {
        position += 1
        if let value { sqlite3_bind_int64(handle, position, value) } else { sqlite3_bind_null(handle, position) }
    }

    mutating func bind(_ value: Int) {
        bind(Int64(value))
    }

    mutating func bind(_ value: Double?) {
        position += 1
        if let value { sqlite3_bind_double(handle, position, value) } else { sqlite3_bind_null(handle, position) }
    }

    mutating func bind(_ value: String?) {
        position += 1
        guard var value else {
            sqlite3_bind_null(handle, position)
            return
        }
        // The UTF-8 bytes with their count (a C string would end at an embedded NUL), copied by SQLite before
        // they go away (SQLITE_TRANSIENT). An empty string is empty text, not NULL.
        let (handle, position) = (handle, position)
        value.withUTF8 { bytes in
            if let start = bytes.baseAddress, !bytes.isEmpty {
                start.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    _ = sqlite3_bind_text(handle, position, $0, Int32(bytes.count), SQLITE_TRANSIENT)
                }
            } else {
                _ = sqlite3_bind_text(handle, position, "", 0, SQLITE_TRANSIENT)
            }
        }
    }

    /// Runs the statement with the values bound so far, then resets it for the next row.
    ///
    /// Every parameter must have been bound. Throws SQLite's error, as GRDB would have.
    mutating func run(in db: Database) throws {
        _ = try step(expecting: SQLITE_DONE, in: db)
    }

    /// Runs a statement that answers one integer (a pragma's value), and resets it.
    mutating func integer(in db: Database) throws -> Int64 {
        try step(expecting: SQLITE_ROW, in: db)
    }

    /// One step, then a reset for the next run.
    ///
    /// Returns the first column of the row it answered (0 without one).
    private mutating func step(expecting expected: Int32, in db: Database) throws -> Int64 {
        precondition(
            position == sqlite3_bind_parameter_count(handle),
            "a BoundStatement ran with \(position) of its values bound"
        )
        position = 0
        let code = sqlite3_step(handle)
        let value = code == SQLITE_ROW ? sqlite3_column_int64(handle, 0) : 0
        sqlite3_reset(handle)
        guard code == expected else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(db.sqliteConnection))
            )
        }
        return value
    }

    /// How many rows the last run changed.
    func changes(in db: Database) -> Int {
        Int(sqlite3_changes(db.sqliteConnection))
    }
}

/// SQLite's "copy the value before returning" destructor (`SQLITE_TRANSIENT`).
///
/// Swift does not import it.
private let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
