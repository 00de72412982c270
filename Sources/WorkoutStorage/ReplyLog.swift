import GRDB
import WorkoutEngine
import WorkoutProtocol

/// The `replyLog` table: the replies remembered for idempotent retries, one row per committed batch.
///
/// A row holds the batch's `(id, reply)` pairs as one JSON array, so a batch of N commands costs one row
/// and one index entry instead of N of each (remembered replies were most of a commit's B-tree work).
/// Replays are looked up in the session's memory; the table only has to bring the window back after a
/// restart. Rows are numbered per device by `lastOrdinal`, the running count of replies remembered up to
/// and including the row, so trimming to the window is one range delete on the primary key.
enum ReplyLog {
    static let tableName = "replyLog"

    /// A batch's replies as one row's text, made before the transaction starts.
    struct Batch: Sendable {
        var count: Int
        /// `[[id, reply], ...]`, built from the wire texts: replies are written per batch, so not through `JSONEncoder`.
        var text: String

        init(_ entries: [RecentReply]) {
            count = entries.count
            text = "["
            for (index, entry) in entries.enumerated() {
                if index > 0 { text += "," }
                text += "["
                text += StoredJSON.text(of: entry.id)
                text += ","
                text += StoredJSON.text(of: entry.reply)
                text += "]"
            }
            text += "]"
        }
    }

    /// Appends a batch's replies for `device` and drops the rows that lie wholly outside the newest
    /// `window` replies (the oldest kept row may reach a little further back: a batch is kept whole).
    static func append(_ batch: Batch, device: String, window: Int, in db: Database) throws {
        // Statements only, no fetch: the running count is read inside SQLite.
        try db.cachedStatement(sql: """
            INSERT INTO replyLog (device, lastOrdinal, count, entries)
            SELECT ?1, COALESCE(MAX(lastOrdinal), 0) + ?2, ?2, ?3 FROM replyLog WHERE device = ?1
            """).execute(arguments: [device, batch.count, batch.text])
        try db.cachedStatement(sql: """
            DELETE FROM replyLog WHERE device = ?1
                AND lastOrdinal <= (SELECT MAX(lastOrdinal) FROM replyLog WHERE device = ?1) - ?2
            """).execute(arguments: [device, window])
    }

    /// The device's remembered replies, oldest first.
    static func entries(device: String, in db: Database) throws -> [(CommandID, Reply)] {
        let texts = try String.fetchAll(
            db, sql: "SELECT entries FROM replyLog WHERE device = ? ORDER BY lastOrdinal", arguments: [device])
        return try texts.flatMap { text in
            try StoredJSON.decode([Entry].self, from: text).map { ($0.id, $0.reply) }
        }
    }

    /// One `[id, reply]` pair of a row.
    private struct Entry: Decodable {
        var id: CommandID
        var reply: Reply

        init(from decoder: any Decoder) throws {
            var pair = try decoder.unkeyedContainer()
            id = try pair.decode(CommandID.self)
            reply = try pair.decode(Reply.self)
        }
    }
}
