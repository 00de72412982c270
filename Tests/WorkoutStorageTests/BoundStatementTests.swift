import Foundation
import GRDB
import Testing

@testable import WorkoutStorage

/// ``BoundStatement`` binds through SQLite's C API, past GRDB's conversions.
///
/// What it stores must read back exactly.
@Suite struct BoundStatementTests {
    @Test func textIntegersRealsAndNullsReadBackExactly() throws {
        let queue = try DatabaseQueue()
        let stored = try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (text TEXT, empty TEXT, missing TEXT, number INTEGER, real REAL)")
            var insert = BoundStatement(try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?)"))
            for number in Int64(1)...2 {
                insert.bind("Gary's \u{0} Gym ✓ \(number)")  // an embedded NUL ends a C string, not this text
                insert.bind("")
                insert.bind(String?.none)
                insert.bind(Int64.max - number)
                insert.bind(1_584_387_913.25)
                try insert.run(in: db)
            }
            // The text as its bytes in hex: reading it as a C string would stop at the NUL.
            return try Row.fetchAll(db, sql: "SELECT hex(text), empty, missing, number, real, typeof(empty) FROM t")
        }
        #expect(stored.count == 2)
        for (index, row) in stored.enumerated() {
            let text = "Gary's \u{0} Gym ✓ \(index + 1)"
            #expect(row[0] as String? == text.utf8.map { String(format: "%02X", $0) }.joined())
            #expect(row[1] as String? == "")
            #expect(row[5] as String? == "text", "empty text, not NULL")
            #expect(row[2] as String? == nil)
            #expect(row[3] as Int64? == Int64.max - Int64(index + 1))
            #expect(row[4] as Double? == 1_584_387_913.25)
        }
    }

    @Test func moreTextsThanKeptInlineOfEverySizeReadBackExactly() throws {
        let columns = 11
        // Short texts live inside the String value, long ones in storage of their own: both must reach the row.
        func text(_ row: Int, _ column: Int) -> String {
            column.isMultiple(of: 2) ? "r\(row)c\(column)" : String(repeating: "Pool — lane \(column) ", count: row + 3)
        }
        let queue = try DatabaseQueue()
        let stored = try queue.write { db in
            let names = (0..<columns).map { "c\($0)" }
            try db.execute(sql: "CREATE TABLE t (\(names.map { "\($0) TEXT" }.joined(separator: ", ")))")
            let placeholders = Array(repeating: "?", count: columns).joined(separator: ", ")
            var insert = BoundStatement(try db.cachedStatement(sql: "INSERT INTO t VALUES (\(placeholders))"))
            for row in 0..<3 {
                for column in 0..<columns { insert.bind(text(row, column)) }
                try insert.run(in: db)
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM t ORDER BY rowid")
        }
        #expect(stored.count == 3)
        for (row, values) in stored.enumerated() {
            for column in 0..<columns {
                #expect(values[column] as String? == text(row, column), "row \(row), column \(column)")
            }
        }
    }

    @Test func aFailedRunThrowsSQLitesErrorAndTheStatementRunsAgain() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (key INTEGER PRIMARY KEY, value TEXT NOT NULL)")
            var insert = BoundStatement(try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?)"))
            insert.bind(Int64(1))
            insert.bind(String?.none)
            #expect(throws: DatabaseError.self) { try insert.run(in: db) }
            insert.bind(Int64(1))
            insert.bind("kept")
            try insert.run(in: db)
            #expect(insert.changes(in: db) == 1)
            #expect(try String.fetchOne(db, sql: "SELECT value FROM t WHERE key = 1") == "kept")
        }
    }
}
