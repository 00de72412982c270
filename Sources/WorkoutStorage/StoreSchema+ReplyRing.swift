import GRDB

extension StoreSchema {
    /// The migration that gives a command's commit few pages to write, registered after the others.
    ///
    /// Self-contained: it needs nothing from the types that read and write the tables today.
    static let replyRingMigrationName =
        "v7: a reply ring per device, the session in its newest slot, no second index on the hot path"

    /// Before it, a start or a share wrote several pages, more as the database grew.
    ///
    /// They were the `workout` row and its `workout_by_device` entry, the `deviceSession` row, a `replyLog` row
    /// inserted and one deleted, and interior pages as they split (docs/decisions/0002-page-size-and-reply-ring.md).
    /// What replaces them:
    /// - `device` and `reply` (see ``ReplyRing``): one slot row per remembered reply, replaced in place; the
    ///   session's ids (and the boot-clock reading at the active workout's start, from the session's JSON) ride
    ///   in the newest slot, so `deviceSession` and `replyLog` go. Each device keeps its
    ///   newest 1,024 replies (the default window; the store's slots are `ordinal % window`), and its empty slots
    ///   are filled with placeholders of about a reply's size (``ReplyRing/reserveSlots(number:window:in:)``).
    /// - `workout_by_device` goes: a device's workouts are listed by walking the table from the newest id (a
    ///   control command, not a device's path), and restoring a session needs only ids.
    /// - `share_due` (status, nextAttemptAt) becomes `share_pending`, the same over pending shares only: a new
    ///   share was appended at the right edge of an index holding every share ever queued, and an index B-tree
    ///   grows there by rebalancing three leaves and their parent (pages more every few shares in a large
    ///   table); pending shares are few, and delivered ones leave it in the delivery worker's commits.
    /// - `replicationOutbox` loses AUTOINCREMENT, whose `sqlite_sequence` row was one page more per replicated
    ///   commit. Its sequence still never goes back: the highest one handed out is kept as a row (pruning
    ///   keeps the newest row), and a new entry's is one above the largest.
    static func migrateToReplyRing(_ db: Database) throws {
        let window = 1024
        try db.execute(
            sql: """
                CREATE TABLE device (number INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                CREATE TABLE reply (
                    key INTEGER PRIMARY KEY, ordinal INTEGER NOT NULL, commandID TEXT, reply TEXT,
                    activeWorkoutID INTEGER, lastEndedWorkoutID INTEGER, activeBootID TEXT, activeStartedBoot REAL);
                INSERT INTO device (name) SELECT device FROM deviceSession UNION SELECT device FROM replyLog ORDER BY 1;
                """
        )
        // Each remembered reply in order (batches by lastOrdinal, entries by position), the newest `window` of a device.
        try db.execute(
            sql: """
                INSERT INTO reply (key, ordinal, commandID, reply)
                SELECT (d.number << 16) | (x.ordinal % \(window)), x.ordinal, x.commandID, x.reply
                FROM (SELECT r.device,
                             ROW_NUMBER() OVER (PARTITION BY r.device ORDER BY r.lastOrdinal, CAST(j.key AS INTEGER)) AS ordinal,
                             COUNT(*) OVER (PARTITION BY r.device) AS total,
                             json_quote(json_extract(j.value, '$[0]')) AS commandID, json_extract(j.value, '$[1]') AS reply
                      FROM replyLog r, json_each(r.entries) j) x
                JOIN device d ON d.name = x.device
                WHERE x.ordinal > x.total - \(window)
                """
        )
        // The session into the newest slot, or a slot of its own for a device that has no remembered reply.
        try db.execute(
            sql: """
                UPDATE reply SET (activeWorkoutID, lastEndedWorkoutID, activeBootID, activeStartedBoot) = (
                    SELECT s.activeWorkoutID, s.lastEndedWorkoutID,
                           json_extract(s.state, '$.active.startedBoot.bootID'), json_extract(s.state, '$.active.startedBoot.seconds')
                    FROM deviceSession s JOIN device d ON d.name = s.device
                    WHERE d.number = reply.key >> 16)
                WHERE ordinal = (SELECT MAX(r.ordinal) FROM reply r WHERE r.key BETWEEN (reply.key >> 16) << 16 AND ((reply.key >> 16) << 16) | 65535);
                INSERT INTO reply (key, ordinal, activeWorkoutID, lastEndedWorkoutID, activeBootID, activeStartedBoot)
                SELECT (d.number << 16) | 1, 1, s.activeWorkoutID, s.lastEndedWorkoutID,
                       json_extract(s.state, '$.active.startedBoot.bootID'), json_extract(s.state, '$.active.startedBoot.seconds')
                FROM deviceSession s JOIN device d ON d.name = s.device
                WHERE NOT EXISTS (SELECT 1 FROM reply r WHERE r.key BETWEEN d.number << 16 AND (d.number << 16) | 65535);
                WITH RECURSIVE slot(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM slot WHERE n + 1 < \(window))
                INSERT OR IGNORE INTO reply (key, ordinal, reply) SELECT (d.number << 16) | n, 0, zeroblob(128) FROM device d, slot;
                DROP TABLE replyLog;
                DROP TABLE deviceSession;
                DROP INDEX workout_by_device;
                DROP INDEX share_due;
                CREATE INDEX share_pending ON share (nextAttemptAt) WHERE status = 'pending';
                """
        )
        try db.execute(
            sql: """
                CREATE TABLE replicationOutboxRing (
                    sequence INTEGER PRIMARY KEY, kind TEXT NOT NULL, recordID INTEGER NOT NULL, committedAt DOUBLE NOT NULL, shippedAt DOUBLE);
                INSERT INTO replicationOutboxRing SELECT sequence, kind, recordID, committedAt, shippedAt FROM replicationOutbox;
                INSERT INTO replicationOutboxRing (sequence, kind, recordID, committedAt)
                SELECT seq, 'workout', 0, 0 FROM sqlite_sequence
                WHERE name = 'replicationOutbox' AND seq > (SELECT COALESCE(MAX(sequence), 0) FROM replicationOutboxRing);
                DROP TABLE replicationOutbox;
                ALTER TABLE replicationOutboxRing RENAME TO replicationOutbox;
                """
        )
    }
}
