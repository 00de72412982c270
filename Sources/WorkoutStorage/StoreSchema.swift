import GRDB

/// The database schema and its migrations. Append migrations; never edit a shipped one.
enum StoreSchema {
    /// `PRAGMA application_id`: marks the file as workoutd's, so a foreign SQLite file is never migrated.
    static let applicationID: Int32 = 0x574B_4F44  // "WKOD"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: workouts, shares, sessions, remembered replies") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")

            try db.create(table: WorkoutRow.databaseTableName) { t in
                t.primaryKey("id", .integer)
                t.column("device", .text).notNull()
                t.column("location", .text).notNull()
                t.column("date", .double).notNull()
                t.column("intensityLevel", .integer).notNull()
                t.column("startedAt", .double).notNull()
                t.column("endedAt", .double)
                t.column("startCommandID", .text)
                t.column("endCommandID", .text)
            }
            try db.create(index: "workout_by_device", on: WorkoutRow.databaseTableName, columns: ["device", "id"])

            try db.create(table: ShareRow.databaseTableName) { t in
                t.primaryKey("id", .integer)
                t.column("workoutID", .integer).notNull().references(WorkoutRow.databaseTableName)
                t.column("device", .text).notNull()
                t.column("service", .text).notNull()
                t.column("queuedAt", .double).notNull()
                t.column("status", .text).notNull()
                t.column("attempts", .integer).notNull()
                t.column("lastError", .text)
                t.column("deliveredAt", .double)
                t.column("nextAttemptAt", .double).notNull()
                t.column("commandID", .text)
            }
            try db.create(index: "share_due", on: ShareRow.databaseTableName, columns: ["status", "nextAttemptAt"])

            try db.create(table: DeviceSessionRow.databaseTableName) { t in
                t.primaryKey("device", .text)
                t.column("state", .text).notNull()
                t.column("activeWorkoutID", .integer).references(WorkoutRow.databaseTableName)
                t.column("lastEndedWorkoutID", .integer).references(WorkoutRow.databaseTableName)
            }

            try db.create(table: "rememberedReply") { t in
                t.autoIncrementedPrimaryKey("sequence")
                t.column("device", .text).notNull()
                t.column("commandID", .text).notNull()
                t.column("reply", .text).notNull()
                t.uniqueKey(["device", "commandID"])
            }
            try db.create(
                index: "rememberedReply_window",
                on: "rememberedReply",
                columns: ["device", "sequence"]
            )
        }
        migrator.registerMigration("v2: remembered replies as one row per batch") { db in
            try db.create(table: ReplyLog.tableName, options: .withoutRowID) { t in
                t.column("device", .text).notNull()
                t.column("lastOrdinal", .integer).notNull()
                t.column("count", .integer).notNull()
                t.column("entries", .text).notNull()
                t.primaryKey(["device", "lastOrdinal"])
            }
            // Each v1 row becomes a batch of one, in the order it was remembered.
            try db.execute(
                sql: """
                    INSERT INTO replyLog (device, lastOrdinal, count, entries)
                    SELECT device, ROW_NUMBER() OVER (PARTITION BY device ORDER BY sequence), 1,
                           '[[' || commandID || ',' || reply || ']]'
                    FROM rememberedReply
                    """
            )
            try db.drop(table: "rememberedReply")
        }
        migrator.registerMigration("v3: replication outbox") { db in
            // One row per workout or share a commit wrote, in commit order, while replication is on.
            try db.create(table: ReplicationOutbox.tableName) { t in
                t.autoIncrementedPrimaryKey("sequence")
                t.column("kind", .text).notNull()
                t.column("recordID", .integer).notNull()
                t.column("committedAt", .double).notNull()
                t.column("shippedAt", .double)
            }
            // The shipper and `status` only ever look at what is unshipped: keep that small to find.
            try db.execute(
                sql: "CREATE INDEX replicationOutbox_pending ON replicationOutbox(sequence) WHERE shippedAt IS NULL"
            )
        }
        migrator.registerMigration("v4: replication shipped watermark") { db in
            // Shipping is in sequence order, so what is shipped is always a prefix of the outbox: one watermark
            // says it. A per-row shippedAt and its partial index cost every device commit two more b-tree pages
            // (the index entry, later its removal), which cost a large share of durable throughput, and each
            // shipped batch an UPDATE of every row in it. shippedAt stays, unused (no DROP COLUMN on old SQLite).
            try db.create(table: ReplicationOutbox.watermarkTableName) { t in
                t.column("id", .integer).primaryKey().check { $0 == 1 }
                t.column("throughSequence", .integer).notNull()
                t.column("shippedAt", .double)
                // 1 while every workout and share in this file has an outbox entry for its newest state; 0 after
                // the store was opened with replication off (or before this version), see ReplicationOutbox.backFill.
                t.column("complete", .integer).notNull().defaults(to: 0)
            }
            try db.execute(
                sql: """
                    INSERT INTO replicationShipped (id, throughSequence, shippedAt)
                    SELECT 1, COALESCE(MAX(sequence), 0), MAX(shippedAt) FROM replicationOutbox WHERE shippedAt IS NOT NULL
                    """
            )
            try db.execute(sql: "DROP INDEX replicationOutbox_pending")
        }
        migrator.registerMigration("v5: clock marks of workouts timed before the clock was synchronised") { db in
            try WorkoutClockRow.createTable(in: db)
        }
        migrator.registerMigration("v6: the workoutd version that last wrote the database") { db in
            try WriterVersion.createTable(in: db)
        }
        migrator.registerMigration(replyRingMigrationName, migrate: migrateToReplyRing)
        migrator.registerMigration("v8: the names people give wearables") { db in
            try DeviceNameRow.createTable(in: db)
        }
        return migrator
    }
}
