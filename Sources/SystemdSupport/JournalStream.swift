import Glibc

/// Whether a descriptor is the stream systemd connected to the journal.
///
/// systemd sets `JOURNAL_STREAM=<device>:<inode>` for a service whose stdout/stderr go to the journal.
/// The variable is inherited by children whose output may be redirected elsewhere, so the descriptor's
/// own device and inode must match (as `systemd.exec(5)` advises) before lines get priority prefixes.
public enum JournalStream {
    public static func isConnected(fileDescriptor: CInt) -> Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        return matches(String(cString: value), fileDescriptor: fileDescriptor)
    }

    /// Compares a `JOURNAL_STREAM` value with the descriptor's device and inode.
    public static func matches(_ journalStream: String, fileDescriptor: CInt) -> Bool {
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
