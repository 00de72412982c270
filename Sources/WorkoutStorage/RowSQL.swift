/// SQL written from a row type's column list, so the columns are named once.
///
/// They are named in the row's `CodingKeys`.
enum RowSQL {
    /// `INSERT INTO table (a, b, …) VALUES (?, ?, …)`, and with `key` an upsert.
    ///
    /// The upsert overwrites every other column of the row already holding that key.
    static func insert(into table: String, columns: [String], updatingOnConflictOf key: String? = nil) -> String {
        var sql =
            "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        if let key {
            let updates = columns.filter { $0 != key }.map { "\($0) = excluded.\($0)" }
            sql += " ON CONFLICT (\(key)) DO UPDATE SET \(updates.joined(separator: ", "))"
        }
        return sql
    }
}
