import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The state directory's single owner.
///
/// An exclusive `flock` on `<state_dir>/workoutd.lock`, held for the life of the process (the kernel drops it when the
/// process ends, however it ends), with the owner's pid inside so a second daemon can say who holds it. The descriptor
/// is never closed, unless the directory's file system is mounted afresh and the lock moves to the new volume
/// (``HeldStateDirectoryLock``).
///
/// The directory itself must be the daemon's: owned by its user and writable by nobody else (created 0700
/// when missing). Another user who could write there could swap the database, the spool or the lock for a
/// symlink to a file of the daemon's choosing; so could a root daemon in a directory someone else owns.
enum StateDirectoryLock {
    static let fileName = "workoutd.lock"
    /// EX_CANTCREAT from sysexits(3), as for a database that cannot be used.
    static let exitStatus: Int32 = 73
    /// The pid is written at offset 0, padded to this fixed width ("%10d\n").
    ///
    /// So a new pid always overwrites the whole of an old one and the file never needs truncating.
    static let pidWidth = 10

    /// Another process holds the directory, or the lock file cannot be made.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Returns the locked descriptor.
    static func acquire(stateDirectory: String) throws(Refusal) -> Int32 {
        let path = (stateDirectory as NSString).appendingPathComponent(Self.fileName)
        do {
            try FileManager.default.createDirectory(
                atPath: stateDirectory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw Refusal(description: "cannot create state directory \(stateDirectory): \(error.localizedDescription)")
        }
        try checkOwnership(of: stateDirectory)
        // O_NOFOLLOW: a lock that is a symlink is refused (ELOOP), never followed to its target; no O_TRUNC.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let reason = errno
            if reason == ELOOP {
                throw Refusal(
                    description:
                        "lock \(path) is a symbolic link; refusing to follow it (remove it; the daemon creates the lock itself)"
                )
            }
            throw Refusal(description: "cannot open \(path): \(String(cString: strerror(reason)))")
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid() else {
            close(fd)
            throw Refusal(
                description: "lock \(path) is not a regular file owned by uid \(geteuid()); refusing to use it"
            )
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.readPID(fd)
            close(fd)
            guard reason == EWOULDBLOCK else {
                throw Refusal(description: "cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            throw Refusal(
                description:
                    "state directory \(stateDirectory) is in use by pid \(holder.map(String.init) ?? "unknown") (lock \(path))"
            )
        }
        // Private whatever the umask (an older daemon created it 0644).
        _ = fchmod(fd, 0o600)
        _ = Self.pidLine(getpid()).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return fd
    }

    /// `"%10d\n"`: fixed width, so it covers any pid written before it.
    static func pidLine(_ pid: pid_t) -> [UInt8] {
        let digits = String(pid)
        return Array((String(repeating: " ", count: max(0, pidWidth - digits.count)) + digits + "\n").utf8)
    }

    /// Refuses a state directory that is not owned by the daemon's user or that group or others may write.
    static func checkOwnership(of stateDirectory: String) throws(Refusal) {
        var status = stat()
        // stat, not lstat: under DynamicUser=yes /var/lib/workoutd is systemd's symlink into /var/lib/private.
        guard stat(stateDirectory, &status) == 0 else {
            throw Refusal(
                description: "cannot inspect state directory \(stateDirectory): \(String(cString: strerror(errno)))"
            )
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal(description: "state directory \(stateDirectory) is not a directory")
        }
        let uid = geteuid()
        guard status.st_uid == uid else {
            throw Refusal(
                description:
                    "state directory \(stateDirectory) is owned by uid \(status.st_uid), not by the daemon's uid \(uid); chown it to the daemon's user"
            )
        }
        let mode = status.st_mode & 0o7777
        guard mode & 0o022 == 0 else {
            throw Refusal(
                description:
                    "state directory \(stateDirectory) is writable by group or others (mode \(String(mode, radix: 8))); chmod go-w it (0700 is what the daemon creates)"
            )
        }
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
