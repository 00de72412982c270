import GRDB

/// A row of the `rememberedReply` table: the reply sent for a command id, replayed when the id comes again.
struct RememberedReplyRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "rememberedReply"

    /// Increasing with insertion: the per-device window keeps the highest ones.
    var sequence: Int64?
    var device: String
    /// The command id as JSON, so `7` and `"7"` are different ids.
    var commandID: String
    /// The reply as JSON, exactly as it was first sent apart from `replayed`.
    var reply: String

    mutating func didInsert(_ inserted: InsertionSuccess) {
        sequence = inserted.rowID
    }
}
