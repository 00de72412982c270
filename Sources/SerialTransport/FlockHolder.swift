#if canImport(Glibc)
import Glibc
#endif

/// Finds who holds a file's flock, from `/proc/locks`, so "held by another program" can name it.
enum FlockHolder {
    /// The pid holding a `FLOCK` on the file `fd` is open on, or nil when none is usable.
    ///
    /// Nil when none is listed or the holder is in another pid namespace (the kernel then shows no usable pid).
    static func pid(holding fd: CInt) -> Int32? {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        guard let file = fopen("/proc/locks", "r") else { return nil }
        defer { fclose(file) }
        let wanted = fileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            if let pid = holder(in: String(cString: line), of: wanted) { return pid }
        }
        return nil
    }

    /// `/proc/locks` names a file `MAJOR:MINOR:INODE`, the device numbers in hex (fs/locks.c).
    static func fileID(device: UInt64, inode: UInt64) -> String {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return hex2(major) + ":" + hex2(minor) + ":\(inode)"
    }

    /// The holder's pid from one line of `/proc/locks` when it is a granted flock on `file`.
    ///
    /// A holder's line reads `1: FLOCK ADVISORY WRITE 4242 00:19:3 0 EOF`; waiters (`1: -> FLOCK …`) hold nothing.
    static func holder(in line: String, of file: String) -> Int32? {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == Substring(file),
            let pid = Int32(fields[4]), pid > 0
        else { return nil }
        return pid
    }

    private static func hex2(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return text.count < 2 ? "0" + text : text
    }
}
