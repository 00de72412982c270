/// Tables that migration v7 (``StoreSchema/replyRingMigrationName``) replaced by ``ReplyRing``.
///
/// Their names stay for the shipped migrations v1 and v2, which create them and are never edited.
enum DeviceSessionRow {
    static let databaseTableName = "deviceSession"
}

enum ReplyLog {
    static let tableName = "replyLog"
}
