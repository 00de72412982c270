import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The state directory's lock as this daemon holds it (``StateDirectoryLock``).
///
/// It follows the directory when its file system is repaired and mounted afresh at the same path.
///
/// A held descriptor belongs to the volume it was opened on: after the remount it keeps the old volume busy (it
/// cannot be unmounted cleanly) while `workoutd.lock` on the new one is locked by nobody, so a second daemon could
/// start on the directory the database is about to be reopened in. ``follow()`` moves the lock to the file now at
/// the path before the database is reopened there.
final class HeldStateDirectoryLock: Sendable {
    let stateDirectory: String
    private let descriptor: Mutex<Int32>

    init(stateDirectory: String, descriptor: Int32) {
        self.stateDirectory = stateDirectory
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the lock at the path again when the lock file there is no longer the one held.
    ///
    /// That is another device or inode, or none; the old descriptor is closed, which lets the old volume go. Returns
    /// whether it moved.
    ///
    /// Throws when the new lock cannot be taken (another daemon holds it, or the new volume cannot be written):
    /// the old descriptor is kept, and the database must not be reopened there, or two daemons would write it.
    func follow() throws(StateDirectoryLock.Refusal) -> Bool {
        let path = (stateDirectory as NSString).appendingPathComponent(StateDirectoryLock.fileName)
        return try descriptor.withLock { (fd: inout Int32) throws(StateDirectoryLock.Refusal) -> Bool in
            var held = stat()
            var atPath = stat()
            if fstat(fd, &held) == 0, stat(path, &atPath) == 0, held.st_dev == atPath.st_dev,
                held.st_ino == atPath.st_ino
            {
                return false
            }
            let moved = try StateDirectoryLock.acquire(stateDirectory: stateDirectory)
            close(fd)
            fd = moved
            return true
        }
    }

    /// Lets the lock go: a daemon embedded in a test process ends without its process ending.
    func release() {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }
}
