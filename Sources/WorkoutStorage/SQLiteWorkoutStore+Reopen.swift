import Foundation
import GRDB
import Synchronization

/// A file as the kernel knows it: the device of its file system and its inode.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    /// The file at `path` now, nil when there is none (or it cannot be looked at).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

extension SQLiteWorkoutStore {
    /// What the initialiser was given, to open the same database again by path.
    struct Reopening: Sendable {
        var stateDirectory: String
        var mode: AccessMode
        var integrityCheckAtOpenLimit: Int
        var softwareVersion: String?
    }

    /// Reopens the database by its path when the file there is no longer the one open.
    ///
    /// The state directory's file system was repaired and mounted afresh at the same path (a file system that turned
    /// read-only after an error cannot be made writable again while mounted, and the descriptors of the old mount keep
    /// failing). Opening runs every check and migration a start runs, so a file that cannot be used is not adopted:
    /// this throws and the old database stays (failing) until the next try. Returns whether it reopened.
    ///
    /// Nothing acknowledged is lost by the switch: every batch was committed before it was answered, and a
    /// batch that failed left nothing behind; sessions whose commits failed restore from the new file.
    @discardableResult
    public func reopenIfReplaced() throws -> Bool {
        let now = FileIdentity(path: path)
        guard now == nil || now != openedFile.withLock({ $0 }) else { return false }
        guard reopening.mode == .readWrite else { return false }
        let fresh = try SQLiteWorkoutStore(
            stateDirectory: reopening.stateDirectory,
            mode: .readWrite,
            replyWindow: replyWindow,
            replicationDoorbell: replicationDoorbell,
            integrityCheckAtOpenLimit: reopening.integrityCheckAtOpenLimit,
            maximumDatabaseBytes: maximumBytes.load(ordering: .relaxed),
            softwareVersion: reopening.softwareVersion
        )
        let old = openDatabase.withLock { database in
            defer { database = fresh.database }
            return database
        }
        openedFile.withLock { $0 = FileIdentity(path: path) }
        // The rings' cursors were found in the old file.
        ringCursors.withLock { $0.removeAll() }
        // Its descriptors belong to the old mount; closing them lets that file system go.
        try? old.close()
        measureSize()
        return true
    }
}
