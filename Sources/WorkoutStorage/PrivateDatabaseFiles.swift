#if canImport(Glibc)
import Glibc
#endif

/// The database and its WAL and shared-memory files are readable by the daemon's user alone (0600).
///
/// Whatever the umask it was started under: they hold every location and time a wearable reported.
///
/// SQLite creates `-wal` and `-shm` with the mode of the database file, so a database created 0600 keeps
/// its companions private too; files an older daemon created 0644 are put right at open.
enum PrivateDatabaseFiles {
    static let mode: mode_t = 0o600

    /// Creates an empty database file 0600 (never through a symlink) when there is none yet.
    ///
    /// So SQLite adopts it instead of creating one under the process's umask.
    static func createIfMissing(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { return }  // exists already (checked at open), or SQLite will report why not
        _ = fchmod(fd, mode)
        close(fd)
    }

    /// Takes group and other permissions off the database, `-wal` and `-shm` that exist.
    ///
    /// Regular files only.
    ///
    /// By path (lstat, then chmod), never by opening them: closing any descriptor of a file drops every POSIX
    /// lock this process holds on it, SQLite's included. A connection opened after that would find the
    /// shared-memory file unlocked, reset it under the connections already mapping it, and they would die of
    /// SIGBUS (seen in the kill -9 test while shares were delivered). The directory is the daemon's alone
    /// (checked at start), so nothing can swap a file for a link between the two calls.
    static func restrict(_ path: String) {
        for file in [path, path + "-wal", path + "-shm"] {
            var status = stat()
            guard lstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o777 != mode else {
                continue
            }
            _ = chmod(file, mode)
        }
    }
}
