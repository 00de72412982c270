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
    /// Texts bound only for the step, as SQLite's view of their own bytes, instead of copies SQLite makes.
    ///
    /// A copied text costs SQLite a malloc each time it is bound again (rebinding frees the last copy), several per
    /// command. Bound without a copy, the bytes need only live through the step, so the step runs inside their
    /// `withUTF8`. Kept inline, as many as a commit's statements bind; more are copied.
    private var deferredTexts = InlineArray<8, DeferredText>(repeating: DeferredText(position: 0, value: ""))
    private var deferredTextCount = 0

    private struct DeferredText {
        var position: Int32
        var value: String
    }

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
        guard let value else {
            sqlite3_bind_null(handle, position)
            return
        }
        // An empty string is empty text, not NULL; SQLite copies it, as it has no bytes to point at.
        if !value.isEmpty, deferredTextCount < deferredTexts.count {
            deferredTexts[deferredTextCount] = DeferredText(position: position, value: value)
            deferredTextCount += 1
        } else {
            Self.bindText(value, at: position, of: handle, destructor: SQLITE_TRANSIENT)
        }
    }

    /// The UTF-8 bytes with their count: a C string would end at an embedded NUL.
    ///
    /// With ``SQLITE_TRANSIENT`` SQLite copies them before they go away; with `nil` (`SQLITE_STATIC`) it points at
    /// them, so the caller keeps them alive until the statement no longer holds them.
    private static func bindText(
        _ value: String,
        at position: Int32,
        of handle: SQLiteStatement,
        destructor: sqlite3_destructor_type?,
        whileBound body: () -> Void = {}
    ) {
        var value = value
        value.withUTF8 { bytes in
            if let start = bytes.baseAddress, !bytes.isEmpty {
                start.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    _ = sqlite3_bind_text(handle, position, $0, Int32(bytes.count), destructor)
                }
            } else {
                _ = sqlite3_bind_text(handle, position, "", 0, SQLITE_TRANSIENT)
            }
            body()
        }
    }

    /// Binds the deferred texts from `index` on without copies; runs `body` while their bytes are alive.
    private func withDeferredTextsBound(from index: Int, _ body: () -> Void) {
        guard index < deferredTextCount else { return body() }
        let text = deferredTexts[index]
        Self.bindText(text.value, at: text.position, of: handle, destructor: nil) {
            withDeferredTextsBound(from: index + 1, body)
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
        var code: Int32 = SQLITE_OK
        var value: Int64 = 0
        withDeferredTextsBound(from: 0) {
            code = sqlite3_step(handle)
            value = code == SQLITE_ROW ? sqlite3_column_int64(handle, 0) : 0
            sqlite3_reset(handle)
            // The texts bound without a copy go away with this closure: nothing may point at them after it.
            sqlite3_clear_bindings(handle)
        }
        deferredTextCount = 0
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
