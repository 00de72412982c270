import CWALWriteGathering
import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// The durable ``WorkoutStore``.
///
/// One SQLite database, `<state-dir>/workoutd.sqlite`, in WAL mode with `synchronous = FULL` on the writer connection,
/// so every commit fsyncs the WAL before it returns and a commit that returned survives a crash or a power cut.
///
/// Each ``commit(_:)`` is one write transaction (the engine calls it once per read batch: group commit).
/// Every SQLite failure after opening surfaces as ``StorageUnavailableError``; SQLite rolls the
/// transaction back, so the next commit starts clean and succeeds as soon as the disk is writable again.
/// The async methods hand their work to GRDB's own dispatch queues and never block Swift's cooperative pool.
public final class SQLiteWorkoutStore: WorkoutStore, ImmediatelyCommittingStore, QueueingCommitStore {
    public static let fileName = "workoutd.sqlite"
    /// The page size of a new database, in bytes.
    static let pageSize = 1024
    /// The result of installing `CWALWriteGathering`, which writes a commit's WAL frames in one call.
    ///
    /// SQLite's own VFS writes a WAL frame as two writes, its header and its page, so a commit made two system calls
    /// per page it changed, each on the writer's critical path. `CWALWriteGathering` hands a commit's frames to the
    /// kernel as one write, the same bytes in the same order before the same fdatasync (`WALWriteGatheringTests`,
    /// `Tests/shell/fsync-count.py`, docs/decisions/0001-durable-path.md). SQLite's result code; anything but SQLITE_OK
    /// leaves SQLite's own VFS in place, which works the same, slower.
    static let walWriteGathering: Int32 = wd_wal_write_gathering_install()
    /// SQLite's page cache per connection, in KiB.
    static let pageCacheKiB = 256
    /// WAL frames (pages) after which a commit checkpoints the WAL into the database.
    static let walAutocheckpointFrames = 4096

    /// Whether this store may change the database.
    ///
    /// `readOnly` is for offline inspection beside a running daemon.
    public enum AccessMode: Sendable {
        case readWrite
        case readOnly
    }

    public let path: String
    /// Whether opening ran SQLite's full `quick_check` (the file was small enough).
    ///
    /// When false, run ``checkIntegrity()`` once serving has started.
    public let integrityCheckedAtOpen: Bool
    /// Up to this many bytes the whole file is checked before opening (cheap: one read of it).
    ///
    /// A larger file gets only the header and schema checks at open, and its full check from ``checkIntegrity()``.
    public static let defaultIntegrityCheckAtOpenLimit = 4 << 20
    /// Command ids remembered per device for replays: the slots of each device's ring (``ReplyRing``).
    public let replyWindow: Int
    /// The open database: replaced by ``reopenIfReplaced()`` when the file at ``path`` is another one.
    var database: any DatabaseWriter { openDatabase.withLock { $0 } }
    let openDatabase: Mutex<any DatabaseWriter>
    /// What reopening needs besides ``path``, and the file (device, inode) the open database is.
    let reopening: Reopening
    let openedFile: Mutex<FileIdentity?>
    /// Each device's place in its reply ring, once its first commit found it.
    ///
    /// Commits are this store's only writes to the ring, so it stays exact, and a commit needs no read to find its
    /// slot. Updated only after a commit succeeded (a failed one rolled its rows back); they belong to one open
    /// database, and a reopen (another file at ``path``) starts again from that file's rings.
    let ringCursors = Mutex(ReplyRing.Cursors())
    /// Set when replication is on: commits then also append to the outbox, and ring it afterwards.
    let replicationDoorbell: ReplicationDoorbell?
    /// The shipper's newest mark that no transaction has written yet (``markShipped(through:at:)``).
    let unsavedShippedMark = Mutex<ReplicationOutbox.ShippedMark?>(nil)
    /// Workouts and shares queued for replication at open because they were committed without it.
    ///
    /// 0 when none.
    public let backFilledForReplication: Int
    /// `storage.max_database_bytes` (0: no budget) and whether the pages in use exceed it.
    ///
    /// They are measured after any commit that could have reached it (``DatabaseSizeWatch``), at open, after a reload
    /// and after pruning.
    let maximumBytes: Atomic<Int64>
    let overBudget = Atomic<Bool>(false)
    /// When a commit measures the pages in use against ``maximumBytes``.
    let sizeWatch = DatabaseSizeWatch()
    /// The store's writes queued for or running on the writer connection (``writerIsIdle``).
    let writesUnderway = Atomic<Int>(0)

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
        // 1 KiB pages write a quarter of the bytes 4 KiB pages do for the same changed pages (SD-card wear;
        // docs/decisions/0002-page-size-and-reply-ring.md). The setting takes effect only
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
                // Lock calls (counted with strace -f): a commit makes 6 fcntl calls, all on the -shm file,
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
                    // what SQLite's default of 1000 frames is with 4 KiB pages) it adds a few fsyncs per thousand
                    // single-flight commands, and pages changed again before it are written back once. A WAL
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

    /// Closes the database; later calls fail with ``StorageUnavailableError``. Deinit closes it too.
    public func close() throws {
        try database.close()
    }

    // MARK: - Access

    /// Every read of the store (the pool's readers, beside the writer).
    ///
    /// A failure is ``StorageUnavailableError``.
    func reading<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.read(body)
        } catch {
            throw StorageUnavailableError(reason: Self.describe(error))
        }
    }

    /// Every write of the store but a device's commit, in a transaction of its own.
    ///
    /// Each is counted in ``writerIsIdle``.
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
