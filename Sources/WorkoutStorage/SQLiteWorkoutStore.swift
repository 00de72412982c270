import CWALWriteGathering
import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// The durable ``WorkoutStore``: one SQLite database, `<state-dir>/workoutd.sqlite`, in WAL mode with
/// `synchronous = FULL` on the writer connection, so every commit fsyncs the WAL before it returns and a
/// commit that returned survives a crash or a power cut.
///
/// Each ``commit(_:)`` is one write transaction (the engine calls it once per read batch: group commit).
/// Every SQLite failure after opening surfaces as ``StorageUnavailableError``; SQLite rolls the
/// transaction back, so the next commit starts clean and succeeds as soon as the disk is writable again.
/// The async methods hand their work to GRDB's own dispatch queues and never block Swift's cooperative pool.
public final class SQLiteWorkoutStore: WorkoutStore, ImmediatelyCommittingStore, QueueingCommitStore {
    public static let fileName = "workoutd.sqlite"
    /// The page size of a new database, in bytes.
    static let pageSize = 1024
    /// SQLite's own VFS writes a WAL frame as two writes, its header and its page: a single-flight commit made
    /// 4 pwrite64 calls and a pipelined batch of 250 commands about 100, each a system call on the writer's
    /// critical path. `CWALWriteGathering` hands a commit's frames to the kernel as one write, the same bytes in
    /// the same order before the same fdatasync (issue 31; `WALWriteGatheringTests`, `Tests/shell/fsync-count.py`).
    /// SQLite's result code; anything but SQLITE_OK leaves SQLite's own VFS in place, which works the same, slower.
    static let walWriteGathering: Int32 = wd_wal_write_gathering_install()
    /// SQLite's page cache per connection, in KiB.
    static let pageCacheKiB = 256
    /// WAL frames (pages) after which a commit checkpoints the WAL into the database.
    static let walAutocheckpointFrames = 4096

    /// Whether this store may change the database; `readOnly` is for offline inspection beside a running daemon.
    public enum AccessMode: Sendable {
        case readWrite
        case readOnly
    }

    public let path: String
    /// Whether opening ran SQLite's full `quick_check` (the file was small enough); when false, run
    /// ``checkIntegrity()`` once serving has started.
    public let integrityCheckedAtOpen: Bool
    /// Up to this many bytes the whole file is checked before opening (cheap: one read of it); a larger file
    /// gets only the header and schema checks at open, and its full check from ``checkIntegrity()``.
    public static let defaultIntegrityCheckAtOpenLimit = 4 << 20
    /// Command ids remembered per device for replays: the slots of each device's ring (``ReplyRing``).
    public let replyWindow: Int
    /// The open database: replaced by ``reopenIfReplaced()`` when the file at ``path`` is another one.
    var database: any DatabaseWriter { openDatabase.withLock { $0 } }
    let openDatabase: Mutex<any DatabaseWriter>
    /// What reopening needs besides ``path``, and the file (device, inode) the open database is.
    let reopening: Reopening
    let openedFile: Mutex<FileIdentity?>
    /// Each device's place in its reply ring, once its first commit found it: commits are this store's only
    /// writes to the ring, so it stays exact, and a commit needs no read to find its slot. Updated only after a
    /// commit succeeded (a failed one rolled its rows back); they belong to one open database, and a reopen
    /// (another file at ``path``) starts again from that file's rings.
    let ringCursors = Mutex(ReplyRing.Cursors())
    /// Set when replication is on: commits then also append to the outbox, and ring it afterwards.
    let replicationDoorbell: ReplicationDoorbell?
    /// The shipper's newest mark that no transaction has written yet (``markShipped(through:at:)``).
    let unsavedShippedMark = Mutex<ReplicationOutbox.ShippedMark?>(nil)
    /// Workouts and shares queued for replication at open because they were committed without it (0 when none).
    public let backFilledForReplication: Int
    /// `storage.max_database_bytes` (0: no budget) and whether the pages in use exceed it, measured after any
    /// commit that could have reached it (``DatabaseSizeWatch``), at open, after a reload and after pruning.
    let maximumBytes: Atomic<Int64>
    private let overBudget = Atomic<Bool>(false)
    /// When a commit measures the pages in use against ``maximumBytes``.
    let sizeWatch = DatabaseSizeWatch()
    /// The store's writes queued for or running on the writer connection (``writerIsIdle``).
    private let writesUnderway = Atomic<Int>(0)

    /// Opens (creating it in `readWrite` mode) the database in `stateDirectory`.
    ///
    /// Throws ``StorageOpenError`` for a file that is not a workoutd database, leaving its bytes untouched.
    /// Blocks while it opens and migrates: call it at start, before serving.
    /// With a `replicationDoorbell`, every commit also records its workouts and shares in the replication
    /// outbox (same transaction) and rings the doorbell once it is durable.
    public init(
        stateDirectory: String,
        mode: AccessMode = .readWrite,
        replyWindow: Int = RecentReplies.defaultCapacity,
        replicationDoorbell: ReplicationDoorbell? = nil,
        integrityCheckAtOpenLimit: Int = defaultIntegrityCheckAtOpenLimit,
        maximumDatabaseBytes: Int64 = StorageConfiguration.defaultMaximumDatabaseBytes,
        softwareVersion: String? = nil
    ) throws {
        // Before any connection opens: each connection keeps the VFS it was opened with.
        _ = Self.walWriteGathering
        self.replicationDoorbell = replicationDoorbell
        self.maximumBytes = Atomic(maximumDatabaseBytes)
        reopening = Reopening(
            stateDirectory: stateDirectory,
            mode: mode,
            integrityCheckAtOpenLimit: integrityCheckAtOpenLimit,
            softwareVersion: softwareVersion
        )
        let path = URL(fileURLWithPath: stateDirectory).appendingPathComponent(Self.fileName).path
        self.path = path
        self.replyWindow = min(max(1, replyWindow), ReplyRing.maximumWindow)
        let exists = FileManager.default.fileExists(atPath: path)

        switch mode {
        case .readOnly:
            guard exists else {
                throw StorageOpenError(
                    kind: .missing,
                    path: path,
                    detail: "there is no database here; check --state-dir (the daemon creates it on its first start)."
                )
            }
        case .readWrite:
            do {
                try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            } catch {
                throw StorageOpenError(
                    kind: .cannotOpen,
                    path: path,
                    detail: "the state directory could not be created (\(error.localizedDescription))."
                )
            }
        }
        if exists {
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
            integrityCheckedAtOpen = (size ?? Int.max) <= integrityCheckAtOpenLimit
            try StoreFileCheck.verify(path: path, fullCheck: integrityCheckedAtOpen, softwareVersion: softwareVersion)
        } else {
            integrityCheckedAtOpen = true  // a new database: nothing to check
        }

        if mode == .readWrite {
            if !exists { PrivateDatabaseFiles.createIfMissing(path) }
            PrivateDatabaseFiles.restrict(path)
        }

        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.readonly = mode == .readOnly
        configuration.busyMode = .timeout(5)
        configuration.label = "workoutd"
        // A commit appends one WAL frame (a page plus 24 bytes) per page it changed: since migration v7 a start
        // or an end changes two (the workout row, the device's reply slot), a share three (CommitPagesTests).
        // 1 KiB pages write a quarter of what 4 KiB pages do per single-flight command for the same pages
        // (SD-card wear; docs/benchmarks.md, parts sdcard and durable-pages). The setting takes effect only
        // when the file is created (before WAL mode is set up); an existing database keeps its size.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)")
            // SQLite's default page cache (2 MB per connection) fills as the database grows and is never
            // given back: resident memory that stays after a load. Commits touch a few pages at the right
            // edge of each B-tree; anything else comes from the kernel's page cache.
            try db.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKiB)")
        }
        var bytesAtOpen: Int64 = 0
        let opened: any DatabaseWriter
        do {
            switch mode {
            case .readWrite:
                let pool = try DatabasePool(path: path, configuration: configuration)
                // WAL with synchronous = NORMAL (what GRDB's DatabasePool sets on its writer after the
                // prepareDatabase hook, so a PRAGMA there does not stick) syncs only at checkpoints: the
                // last acked commits could be lost on a power cut. FULL fsyncs the WAL at every commit;
                // group commit (one transaction per read batch) keeps that to one fsync per batch.
                // The pool has one writer connection for its lifetime, so setting it here holds.
                // SQLite quietly opens a file it cannot write read-only, and such a connection never
                // becomes writable again: refuse to start rather than fail every command.
                // Lock calls (issue 31, counted with strace -f): a commit makes 6 fcntl calls, all on the -shm file,
                // as many as the Python durable peer's. 3 take the read snapshot: every commit moves the end of the
                // WAL, so the next transaction finds no read mark at it and moves one (exclusive lock, unlock, shared
                // lock); 2 are the WAL write lock; 1 drops the read mark. None is for the database file (SQLite keeps
                // its shared lock there while in WAL mode). They stay because other connections read the same WAL:
                // the pool's readers (control socket, share delivery, replication) and `workoutd workouts` in
                // another process beside the daemon. EXCLUSIVE locking mode or the unix-excl VFS would drop them
                // only by keeping the WAL index in this connection's heap, where no other reader can see it, and a
                // shim that skipped the write lock would leave a reader process's WAL recovery racing our commits.
                // Thread hops per single-flight command: none. A lone command on an idle writer commits, and syncs,
                // on the device's loop that read it (``commitImmediately(_:)``), since the device waits for that sync
                // anyway; a pipelining device's batches go to GRDB's writer queue (``enqueueCommit(_:completion:)``),
                // so its loop steps the next batch meanwhile.
                let readOnly = try pool.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA synchronous = FULL")
                    // A checkpoint syncs the WAL and the database: every 4096 frames (4 MiB of 1 KiB pages,
                    // what SQLite's default of 1000 frames is with 4 KiB pages) it adds 0.003 fsyncs to a
                    // single-flight command, and pages changed again before it are written back once. A WAL
                    // a large batch grew past that is cut back to it after the checkpoint.
                    try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.walAutocheckpointFrames)")
                    try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walAutocheckpointFrames * Self.pageSize)")
                    return sqlite3_db_readonly(db.sqliteConnection, "main") == 1
                }
                if readOnly {
                    throw StorageOpenError(
                        kind: .cannotOpen,
                        path: path,
                        detail:
                            "the database can only be opened read-only (read-only file system or file permissions); make it writable, or use the read-only inspection commands."
                    )
                }
                try StoreSchema.migrator.migrate(pool)
                if let softwareVersion { try pool.write { db in try WriterVersion.record(softwareVersion, in: db) } }
                // The WAL and -shm exist now; an older daemon's may have been created group- or world-readable.
                PrivateDatabaseFiles.restrict(path)
                let replicating = replicationDoorbell != nil
                backFilledForReplication = try pool.write { db in
                    try ReplicationOutbox.backFill(replicating: replicating, in: db)
                }
                opened = pool
                bytesAtOpen = try pool.read { db in try Self.bytesInUse(db) }
            case .readOnly:
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                try queue.read { db in
                    guard try StoreSchema.migrator.hasCompletedMigrations(db) else {
                        throw StorageOpenError(
                            kind: .newerSchema,
                            path: path,
                            detail:
                                "the database has an older schema; start the daemon once to migrate it, then inspect it."
                        )
                    }
                }
                backFilledForReplication = 0
                opened = queue
            }
        } catch let error as StorageOpenError {
            throw error
        } catch {
            throw StorageOpenError(
                kind: .cannotOpen,
                path: path,
                detail: "SQLite could not open it (\(Self.describe(error)))."
            )
        }
        openDatabase = Mutex(opened)
        openedFile = Mutex(FileIdentity(path: path))
        // A daemon restarted on a full database refuses new workouts from its first command.
        recordSize(bytesAtOpen)
    }

    // MARK: - SessionStore, ShareQueueStore, RecordQueries

    public func watermark() async throws -> IDWatermark {
        try await reading { db in
            IDWatermark(
                workout: try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM workout") ?? 0,
                share: try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM share") ?? 0
            )
        }
    }

    public func restore(_ device: DeviceIdentity) async throws -> DeviceSnapshot {
        let window = replyWindow
        return try await reading { db in
            let stored = try ReplyRing.stored(device: device.rawValue, in: db)
            // The active workout is the row its start wrote (ends and starts commit it with the session), with its
            // clock mark (and boot readings) from `workoutClock`, as every other read has it. The last ended one
            // stays an id: a share reads it from the store then, with the times ClockCorrection may have changed.
            var records =
                try stored.activeWorkoutID.flatMap { try WorkoutRow.fetchOne(db, key: $0) }.map { [try $0.record()] }
                ?? []
            try WorkoutClockRow.attach(to: &records, in: db)
            var active = records.first
            // An unmarked workout's boot reading is only in the slot.
            if active?.startedBoot == nil { active?.startedBoot = stored.activeStartedBoot }
            return DeviceSnapshot(
                state: active.map { .active($0) } ?? .idle,
                lastEndedWorkoutID: stored.lastEndedWorkoutID,
                recentReplies: RecentReplies(stored.entries, capacity: window),
                pendingShares: try Self.pendingShares(of: device, in: db)
            )
        }
    }

    public func pendingShareCount(device: DeviceIdentity) async throws -> Int {
        try await reading { db in try Self.pendingShares(of: device, in: db) }
    }

    /// Through the `share_pending` index: only pending shares are looked at.
    private static func pendingShares(of device: DeviceIdentity, in db: Database) throws -> Int {
        try ShareRow.filter(sql: ShareRow.isPendingSQL).filter(Column("device") == device.rawValue).fetchCount(db)
    }

    // MARK: - Size budget

    public var refusesNewWorkouts: Bool { overBudget.load(ordering: .relaxed) }

    /// A reload's `storage.max_database_bytes` (0: none), compared with the size at once: refused workouts
    /// commit nothing, so a full hub would otherwise wait for some other commit to see a raised budget.
    public func update(maximumDatabaseBytes: Int64) {
        maximumBytes.store(maximumDatabaseBytes, ordering: .relaxed)
        measureSize()
    }

    /// Measures the database again (after a reload, and after pruning freed pages); the next commit measures too.
    func measureSize() {
        sizeWatch.forget()
        if let bytes = try? database.read({ db in try Self.bytesInUse(db) }) { recordSize(bytes) }
    }

    /// The pages holding data (free pages are reused before the file grows), in bytes. The WAL is not counted:
    /// checkpoints keep it under `journal_size_limit` (4 MiB).
    static func bytesInUse(_ db: Database) throws -> Int64 {
        let (pages, pageSize) = try pagesInUse(db)
        return pages * pageSize
    }

    /// Three plain pragmas, each a statement of one opcode (the table-valued `pragma_page_count()` form sets up
    /// a virtual table each time); SQLite compiles each anew on every run, so commits run them only when
    /// ``DatabaseSizeWatch`` says the budget could be reached.
    static func pagesInUse(_ db: Database) throws -> (pages: Int64, pageSize: Int64) {
        var pages = BoundStatement(try db.cachedStatement(sql: "PRAGMA page_count"))
        var free = BoundStatement(try db.cachedStatement(sql: "PRAGMA freelist_count"))
        var pageSize = BoundStatement(try db.cachedStatement(sql: "PRAGMA page_size"))
        return (try pages.integer(in: db) - (try free.integer(in: db)), try pageSize.integer(in: db))
    }

    func recordSize(_ bytes: Int64) {
        let budget = maximumBytes.load(ordering: .relaxed)
        overBudget.store(budget > 0 && bytes >= budget, ordering: .relaxed)
    }

    public func commit(_ batch: StoreBatch) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enqueueCommit(batch) { continuation.resume(with: $0) }
        }
    }

    /// Queued on GRDB's writer queue, which runs its accesses one at a time in order: a device's loop meanwhile
    /// steps its next batch, and ``CommitPipeline`` queues that one's commit from this completion, on the writer's
    /// thread, which goes on with it without waking the loop first.
    public func enqueueCommit(_ batch: StoreBatch, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writesUnderway.add(1, ordering: .relaxed)
        let database = self.database
        database.asyncWriteWithoutTransaction { db in
            // Prepared here: the commit queued before it has set the device's ring cursor by now.
            let commit = PreparedCommit(batch, in: self, database: database)
            let result = Result { () throws -> Void in
                let outcome = try db.commitOrUnavailable(commit.write, then: commit.measure)
                self.committed(commit, outcome)
            }
            self.writesUnderway.subtract(1, ordering: .relaxed)
            completion(result)
        }
    }

    /// The same transaction as ``commit(_:)``, on the calling thread: GRDB's writer queue runs a synchronous
    /// access in place when it is idle (libdispatch), so a lone command's commit costs no hop to the writer's
    /// thread and back. The caller's thread waits for the sync, so a session asks for it only when the device
    /// waits for it too (single flight) and ``writerIsIdle``; a write that starts meanwhile delays it by one transaction.
    public func commitImmediately(_ batch: StoreBatch) throws {
        let commit = PreparedCommit(batch, in: self)
        writesUnderway.add(1, ordering: .relaxed)
        defer { writesUnderway.subtract(1, ordering: .relaxed) }
        let outcome: PreparedCommit.Outcome
        do {
            outcome = try commit.database.writeWithoutTransaction { db in
                try db.commitOrUnavailable(commit.write, then: commit.measure)
            }
        } catch let error as StorageUnavailableError {
            throw error
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
        committed(commit, outcome)
    }

    public var immediateCommitWaitsForDisk: Bool { true }

    public var writerIsIdle: Bool { writesUnderway.load(ordering: .relaxed) == 0 }

    /// What a commit reads from the store before its transaction: one database for the whole commit (a reopen
    /// may replace the store's meanwhile), the device's ring cursor, and the shipper's mark.
    struct PreparedCommit: Sendable {
        let batch: StoreBatch
        let window: Int
        let database: any DatabaseWriter
        let knownCursor: ReplyRing.Cursor?
        let replicated: Bool
        /// The shipper's mark rides along: one row more in a transaction that commits anyway.
        let mark: ReplicationOutbox.ShippedMark?
        let sizeWatch: DatabaseSizeWatch
        let budget: Int64

        init(_ batch: StoreBatch, in store: SQLiteWorkoutStore, database: (any DatabaseWriter)? = nil) {
            self.batch = batch
            window = store.replyWindow
            let database = database ?? store.database
            self.database = database
            knownCursor = store.ringCursors.withLock { $0.cursor(of: batch.device.rawValue, in: database) }
            replicated = store.replicationDoorbell != nil
            mark = replicated ? store.unsavedShippedMark.withLock({ $0 }) : nil
            sizeWatch = store.sizeWatch
            budget = store.maximumBytes.load(ordering: .relaxed)
        }

        struct Outcome: Sendable {
            /// The bytes in use, when the commit measured them (``DatabaseSizeWatch``).
            var size: Int64?
            var cursor: ReplyRing.Cursor
            var recorded: Bool
        }

        func write(in db: Database) throws -> Outcome {
            let rows = try BatchRows(batch, window: window)
            // Cached statements: compiled once per connection, not once per row.
            if !rows.workouts.isEmpty {
                var upsertWorkout = BoundStatement(try db.cachedStatement(sql: WorkoutRow.upsertSQL))
                for workout in rows.workouts {
                    workout.bind(to: &upsertWorkout)
                    try upsertWorkout.run(in: db)
                }
            }
            if !rows.clockMarks.isEmpty {
                let upsertMark = try db.cachedStatement(sql: WorkoutClockRow.upsertSQL)
                for mark in rows.clockMarks { try upsertMark.execute(arguments: mark.statementArguments) }
            }
            if !rows.shares.isEmpty {
                var insertShare = BoundStatement(try db.cachedStatement(sql: ShareRow.insertSQL))
                for share in rows.shares {
                    share.bind(to: &insertShare)
                    try insertShare.run(in: db)
                }
            }
            let device = batch.device.rawValue
            let cursor = try ReplyRing.write(
                rows.ring,
                at: knownCursor ?? ReplyRing.cursor(device: device, window: window, in: db),
                window: window,
                in: db
            )
            if replicated { try ReplicationOutbox.append(rows, in: db) }
            if let mark { try ReplicationOutbox.save(mark, in: db) }
            return Outcome(size: nil, cursor: cursor, recorded: !rows.workouts.isEmpty || !rows.shares.isEmpty)
        }

        /// After the transaction committed, on the writer connection: its WAL frames are counted by now.
        func measure(in db: Database, _ outcome: inout Outcome) {
            outcome.size = sizeWatch.bytesInUseIfNeeded(db, budget: budget)
        }
    }

    private func committed(_ commit: PreparedCommit, _ outcome: PreparedCommit.Outcome) {
        ringCursors.withLock { $0.set(outcome.cursor, of: commit.batch.device.rawValue, in: commit.database) }
        if let size = outcome.size { recordSize(size) }
        if let mark = commit.mark { shippedMarkSaved(mark) }
        if let replicationDoorbell, outcome.recorded { replicationDoorbell.ring() }
    }

    public func workouts(device: DeviceIdentity?, limit: Int?) async throws -> [WorkoutRecord] {
        try await reading { db in
            var request = WorkoutRow.order(Column("id").desc)
            if let device { request = request.filter(Column("device") == device.rawValue) }
            if let limit { request = request.limit(max(0, limit)) }
            var records = try request.fetchAll(db).map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            return records
        }
    }

    public func workouts(matching query: WorkoutQuery) async throws -> [WorkoutRecord] {
        try await reading { db in
            var request = WorkoutRow.order(Column("id").desc)
            if let device = query.device { request = request.filter(Column("device") == device.rawValue) }
            if let from = query.startedFrom {
                request = request.filter(Column("startedAt") >= from.timeIntervalSince1970)
            }
            if let before = query.startedBefore {
                request = request.filter(Column("startedAt") < before.timeIntervalSince1970)
            }
            if let id = query.beforeID { request = request.filter(Column("id") < id) }
            if let limit = query.limit { request = request.limit(max(0, limit)) }
            return try request.fetchAll(db).map { try $0.record() }
        }
    }

    public func shares(limit: Int?) async throws -> [ShareRecord] {
        try await reading { db in
            var request = ShareRow.order(Column("id").desc)
            if let limit { request = request.limit(max(0, limit)) }
            return try request.fetchAll(db).map { try $0.record() }
        }
    }

    public func workout(id: Int64) async throws -> WorkoutRecord? {
        try await reading { db in
            var records = try WorkoutRow.fetchOne(db, key: id).map { [try $0.record()] } ?? []
            try WorkoutClockRow.attach(to: &records, in: db)
            return records.first
        }
    }

    public func workouts(ids: [Int64]) async throws -> [Int64: WorkoutRecord] {
        try await reading { db in
            var found: [Int64: WorkoutRecord] = [:]
            var records = try WorkoutRow.fetchAll(db, keys: ids).map { try $0.record() }
            try WorkoutClockRow.attach(to: &records, in: db)
            for record in records { found[record.id] = record }
            return found
        }
    }

    public func dueShares(now: Date, limit: Int) async throws -> [ShareRecord] {
        try await reading { db in
            try ShareRow
                .filter(sql: ShareRow.isPendingSQL).filter(Column("nextAttemptAt") <= now.timeIntervalSince1970)
                .order(Column("id"))
                .limit(max(0, limit))
                .fetchAll(db)
                .map { try $0.record() }
        }
    }

    /// One lookup in the `share_pending` index (nextAttemptAt of pending shares).
    public func nextShareAttempt() async throws -> Date? {
        try await reading { db in
            try Double.fetchOne(
                db,
                sql: "SELECT MIN(nextAttemptAt) FROM share WHERE \(ShareRow.isPendingSQL)"
            ).map { Date(timeIntervalSince1970: $0) }
        }
    }

    public func recordDelivery(shareID: Int64, result: DeliveryResult) async throws {
        try await recordDeliveries([(shareID, result)])
    }

    /// One transaction (one fsync) for a pass of the delivery worker, so deliveries cost the devices'
    /// commits little of the single writer.
    public func recordDeliveries(_ results: [(shareID: Int64, result: DeliveryResult)]) async throws {
        guard !results.isEmpty else { return }
        try await writing { db in
            // Only a pending share changes: a second report of the same delivery is a no-op.
            let delivered = try db.cachedStatement(
                sql: """
                    UPDATE share SET status = 'delivered', attempts = attempts + 1, deliveredAt = ?, lastError = NULL
                    WHERE id = ? AND status = 'pending'
                    """
            )
            let failed = try db.cachedStatement(
                sql: """
                    UPDATE share SET attempts = attempts + 1, lastError = ?, nextAttemptAt = ?
                    WHERE id = ? AND status = 'pending'
                    """
            )
            for (shareID, result) in results {
                switch result {
                case .delivered(let at):
                    try delivered.execute(arguments: [at.timeIntervalSince1970, shareID])
                case .failed(let error, let retryAt):
                    try failed.execute(arguments: [error, retryAt.timeIntervalSince1970, shareID])
                }
            }
        }
    }

    public func activeSessionCount() async throws -> Int {
        try await reading { db in
            try Int.fetchOne(
                db,
                sql: "SELECT COUNT(*) FROM (\(ReplyRing.sessionsSQL)) WHERE activeWorkoutID IS NOT NULL"
            ) ?? 0
        }
    }

    public func pendingShareCount() async throws -> Int {
        try await reading { db in
            try ShareRow.filter(sql: ShareRow.isPendingSQL).fetchCount(db)
        }
    }

    /// SQLite's `quick_check` over the whole database: `[]` when it is sound, otherwise the first problems
    /// SQLite names. Reads every page, so on a large database on an SD card it takes seconds; it runs on a
    /// reader connection (WAL), so commits go on meanwhile.
    public func checkIntegrity() async throws -> [String] {
        let check: [String]
        do {
            check = try await database.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(10)") }
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
        {
            // Damage bad enough that the check itself stops on it (a page that is not a B-tree page).
            return [Self.describe(error)]
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
        return check == ["ok"] ? [] : check
    }

    /// Closes the database; later calls fail with ``StorageUnavailableError``. Deinit closes it too.
    public func close() throws {
        try database.close()
    }

    // MARK: - Access

    /// Every read of the store (the pool's readers, beside the writer); a failure is ``StorageUnavailableError``.
    func reading<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.read(body)
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
    }

    /// Every write of the store but a device's commit, in a transaction of its own, counted in ``writerIsIdle``.
    func writing<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        writesUnderway.add(1, ordering: .relaxed)
        defer { writesUnderway.subtract(1, ordering: .relaxed) }
        do {
            return try await database.write(body)
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return "\(error.resultCode): \(error.message ?? "no message")"
        }
        return String(describing: error)
    }
}

/// A ``StoreBatch`` turned into rows before the transaction starts, so only SQL runs inside it.
struct BatchRows: Sendable {
    var workouts: [WorkoutRow]
    var shares: [ShareRow]
    var ring: ReplyRing.Batch
    /// The clock marks of the batch's marked workouts (none while the clock is synchronised).
    var clockMarks: [WorkoutClockRow]

    init(_ batch: StoreBatch, window: Int) throws {
        // A workout started and ended in one batch (pipelined) is one row write, its last state: the upsert
        // overwrites every column, so the earlier write would change nothing that stays.
        var newest: [Int64: Int] = [:]
        for (index, workout) in batch.workouts.enumerated() { newest[workout.id] = index }
        workouts = try batch.workouts.enumerated().filter { newest[$0.element.id] == $0.offset }.map {
            try WorkoutRow($0.element)
        }
        clockMarks = batch.workouts.compactMap(WorkoutClockRow.init)
        shares = try batch.shares.map(ShareRow.init)
        ring = ReplyRing.Batch(batch, window: window)
    }
}
