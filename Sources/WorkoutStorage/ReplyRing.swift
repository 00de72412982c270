import GRDB
import WorkoutEngine
import WorkoutProtocol

/// The `device` and `reply` tables.
///
/// Each device's remembered replies (for idempotent retries) as a ring of slots overwritten in place, and its session
/// in the newest slot.
///
/// Why this shape (few pages per acknowledged command): a single-flight command's commit writes one
/// `reply` row, which replaces a row of about the same size in place: one page, and no tree grows once the
/// ring is full. The session (the active and the last ended workout) rides in that same row, so it costs no
/// page of its own; the active workout itself is the `workout` row its start wrote, and the boot-clock reading
/// at its start (what its duration is measured on, kept elsewhere only for a marked workout) rides in the slot
/// too. A device's slots are the
/// keys `number << 16 | slot` of a rowid table (`slot = ordinal % window`): an integer key needs no second
/// index, and keeps a device's ring together. A device's name is looked up in `device` once per process.
enum ReplyRing {
    static let deviceTableName = "device"
    static let tableName = "reply"
    /// A device's keys are `number << slotBits` up to the next device's.
    static let slotBits = 16
    /// The largest window the keys leave room for.
    static let maximumWindow = 1 << slotBits

    /// Where a device's ring is: its number, the newest ordinal written, and its last ended workout.
    ///
    /// The newest ordinal is 0 when none is written yet; the last ended workout is the one its newest slot holds, so a
    /// commit that ends none carries it over without reading the slot back.
    struct Cursor: Sendable, Equatable {
        var number: Int64
        var head: Int64
        var lastEndedWorkoutID: Int64? = nil

        var firstKey: Int64 { number << Int64(ReplyRing.slotBits) }
        var lastKey: Int64 { firstKey | Int64(ReplyRing.maximumWindow - 1) }

        func key(ordinal: Int64, window: Int) -> Int64 { firstKey | (ordinal % Int64(window)) }
    }

    /// The store's cursors, and the open database they were found in.
    ///
    /// A reopen (``SQLiteWorkoutStore/reopenIfReplaced()``) adopts another file, whose rings are found again by their
    /// first commits.
    struct Cursors: Sendable {
        private var database: ObjectIdentifier?
        private var cursors: [String: Cursor] = [:]

        func cursor(of device: String, in database: any DatabaseWriter) -> Cursor? {
            self.database == ObjectIdentifier(database) ? cursors[device] : nil
        }

        mutating func set(_ cursor: Cursor, of device: String, in database: any DatabaseWriter) {
            if self.database != ObjectIdentifier(database) {
                self.database = ObjectIdentifier(database)
                cursors = [:]
            }
            cursors[device] = cursor
        }

        mutating func removeAll() {
            database = nil
            cursors = [:]
        }
    }

    /// A batch's part of the ring, made before the transaction starts.
    struct Batch: Sendable {
        /// `(command id JSON, reply line)` for the newest replies of the batch, and how many it remembered.
        ///
        /// Replies older than a window would be overwritten in the same transaction, so they are left out.
        var entries: [(commandID: String, reply: String)]
        var count: Int
        var activeWorkoutID: Int64?
        /// The boot clock at the active workout's start.
        ///
        /// Not in its `workout` row, and in `workoutClock` only when the workout is marked, yet its duration is
        /// measured on it after a restart in the same boot.
        var activeStartedBoot: BootInstant?
        /// The workout the batch ended last, if it ended one; otherwise the previous head's carries over.
        var endedWorkoutID: Int64?

        init(_ batch: StoreBatch, window: Int) {
            count = batch.replies.count
            entries = batch.replies.suffix(window).map { (StoredJSON.text(of: $0.id), StoredJSON.text(of: $0.reply)) }
            activeWorkoutID = batch.state.activeWorkout?.id
            activeStartedBoot = batch.state.activeWorkout?.startedBoot
            endedWorkoutID = batch.workouts.last(where: { $0.endedAt != nil })?.id
        }
    }

    /// The size of an empty slot's placeholder reply.
    ///
    /// About a reply's, so that writing one in its place leaves the page's cells where they are instead of splitting
    /// it.
    static let placeholderBytes = 128

    /// Fills the device's empty slots up to `window` with placeholders.
    ///
    /// A placeholder has no command id and a zero blob for the reply: the ring's pages are all there from the start,
    /// and a commit replaces a row in place from the first command on; otherwise each device's first thousand commands
    /// would grow the tree, a page at a time.
    static func reserveSlots(number: Int64, window: Int, in db: Database) throws {
        let firstKey = number << Int64(slotBits)
        try db.execute(
            sql: """
                WITH RECURSIVE slot(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM slot WHERE n + 1 < ?)
                INSERT OR IGNORE INTO reply (key, ordinal, reply) SELECT ? | n, 0, zeroblob(?) FROM slot
                """,
            arguments: [window, firstKey, placeholderBytes]
        )
    }

    /// The device's cursor, from the database: once per device and process (the store keeps it afterwards).
    /// Inserts the device's row and reserves its slots when it has none.
    static func cursor(device: String, window: Int, in db: Database) throws -> Cursor {
        if let number = try Int64.fetchOne(db, sql: "SELECT number FROM device WHERE name = ?", arguments: [device]) {
            let cursor = Cursor(number: number, head: 0)
            // The bare column comes from the row holding the MAX (as in ``sessionsSQL``).
            let newest = try Row.fetchOne(
                db,
                sql: "SELECT MAX(ordinal), lastEndedWorkoutID FROM reply WHERE key BETWEEN ? AND ?",
                arguments: [cursor.firstKey, cursor.lastKey]
            )
            return Cursor(number: number, head: newest?[0] ?? 0, lastEndedWorkoutID: newest?[1])
        }
        try db.execute(sql: "INSERT INTO device (name) VALUES (?)", arguments: [device])
        let number = db.lastInsertedRowID
        try reserveSlots(number: number, window: window, in: db)
        return Cursor(number: number, head: 0)
    }

    /// Writes the batch's replies into their slots, the session into the newest.
    ///
    /// A batch that remembered no reply (commands without an id) updates the session in the newest slot. Returns the
    /// advanced cursor.
    static func write(_ batch: Batch, at cursor: Cursor, window: Int, in db: Database) throws -> Cursor {
        let lastEnded = batch.endedWorkoutID ?? cursor.lastEndedWorkoutID
        guard !batch.entries.isEmpty || cursor.head == 0 else {
            try db.cachedStatement(
                sql: """
                    UPDATE reply SET activeWorkoutID = ?, activeBootID = ?, activeStartedBoot = ?, lastEndedWorkoutID = ? WHERE key = ?
                    """
            ).execute(arguments: [
                batch.activeWorkoutID, batch.activeStartedBoot?.bootID, batch.activeStartedBoot?.seconds, lastEnded,
                cursor.key(ordinal: cursor.head, window: window),
            ])
            return Cursor(number: cursor.number, head: cursor.head, lastEndedWorkoutID: lastEnded)
        }
        // An UPDATE by key rewrites the slot's row where it is: one B-tree search (an upsert tries the insert
        // first; REPLACE deletes and inserts again). Slots exist from the device's first commit on
        // (``reserveSlots``), up to the window they were reserved with; a larger window's new slots are inserted.
        var update = BoundStatement(try db.cachedStatement(sql: slotUpdateSQL))
        let boot = batch.activeStartedBoot
        let head = cursor.head + Int64(max(batch.count, 1))
        // A batch without any remembered reply yet still writes the session, into a slot of its own.
        let slotCount = max(batch.entries.count, 1)
        var ordinal = head - Int64(slotCount)
        for index in 0..<slotCount {
            let slot: (commandID: String?, reply: String?) =
                batch.entries.isEmpty ? (nil, nil) : (batch.entries[index].commandID, batch.entries[index].reply)
            ordinal += 1
            let newest = index == slotCount - 1
            // In ``slotColumns`` order, then the key.
            func bindSlot(to statement: inout BoundStatement) {
                statement.bind(ordinal)
                statement.bind(slot.commandID)
                statement.bind(slot.reply)
                statement.bind(newest ? batch.activeWorkoutID : nil)
                statement.bind(newest ? boot?.bootID : nil)
                statement.bind(newest ? boot?.seconds : nil)
                statement.bind(newest ? lastEnded : nil)
                statement.bind(cursor.key(ordinal: ordinal, window: window))
            }
            bindSlot(to: &update)
            try update.run(in: db)
            if update.changes(in: db) == 0 {
                var insert = BoundStatement(try db.cachedStatement(sql: slotInsertSQL))
                bindSlot(to: &insert)
                try insert.run(in: db)
            }
        }
        return Cursor(number: cursor.number, head: head, lastEndedWorkoutID: lastEnded)
    }

    /// A slot's columns besides its key.
    static let slotColumns = [
        "ordinal", "commandID", "reply", "activeWorkoutID", "activeBootID", "activeStartedBoot", "lastEndedWorkoutID",
    ]
    /// A slot's whole row by its key (the last parameter), and the same as a new row.
    static let slotUpdateSQL =
        "UPDATE \(tableName) SET \(slotColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE key = ?"
    static let slotInsertSQL = RowSQL.insert(into: tableName, columns: slotColumns + ["key"])

    /// A device's remembered replies, oldest first, and its session ids (from the newest slot).
    struct Stored {
        var entries: [(CommandID, Reply)] = []
        var activeWorkoutID: Int64?
        var activeStartedBoot: BootInstant?
        var lastEndedWorkoutID: Int64?
    }

    static func stored(device: String, in db: Database) throws -> Stored {
        guard let number = try Int64.fetchOne(db, sql: "SELECT number FROM device WHERE name = ?", arguments: [device])
        else {
            return Stored()
        }
        let cursor = Cursor(number: number, head: 0)
        var stored = Stored()
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT commandID, reply, activeWorkoutID, lastEndedWorkoutID, activeBootID, activeStartedBoot FROM reply
                WHERE key BETWEEN ? AND ? ORDER BY ordinal
                """,
            arguments: [cursor.firstKey, cursor.lastKey]
        )
        while let row = try rows.next() {
            if let id: String = row[0], let reply: String = row[1] {
                stored.entries.append(
                    (try StoredJSON.decode(CommandID.self, from: id), try StoredJSON.decode(Reply.self, from: reply))
                )
            }
            stored.activeWorkoutID = row[2]
            stored.lastEndedWorkoutID = row[3]
            let bootID: String? = row[4]
            let seconds: Double? = row[5]
            stored.activeStartedBoot = bootID.flatMap { id in seconds.map { BootInstant(bootID: id, seconds: $0) } }
        }
        return stored
    }
}

extension ReplyRing {
    /// Each device's session, as a subquery.
    ///
    /// `number, activeWorkoutID, lastEndedWorkoutID` from its newest slot (SQLite takes the bare columns of an
    /// aggregate query from the row that has the MAX). For status queries and pruning, which read every slot; the
    /// device path never runs it.
    static let sessionsSQL = """
        SELECT key >> \(slotBits) AS number, activeWorkoutID, lastEndedWorkoutID, MAX(ordinal) FROM reply GROUP BY key >> \(slotBits)
        """
}
