import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Gives back the pages of the executable's code that start-up faulted in.
///
/// Start-up runs code the daemon never needs again while it serves (argument parsing, the YAML reader, migrations,
/// locale set-up in Foundation), and the kernel maps in the neighbours of every page it faults (fault-around), so after
/// start most of the executable's code stays resident: most of what the statically linked binary adds to RSS. Once
/// ready, this drops the process's mappings of its own code pages; what serving runs faults back in on first use, from
/// the page cache. Only the executable's r-xp mappings: code is never written, so the file holds exactly what was
/// mapped (unlike RELRO data the loader relocated).
enum StartupCodeRelease {
    /// Returns the bytes of code mapping given back to the kernel (0 when /proc is unreadable).
    @discardableResult
    static func release() -> Int {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        else { return 0 }
        var released = 0
        for line in maps.split(separator: "\n") {
            // "start-end perms offset dev inode path"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "r-xp", fields[5...].joined(separator: " ") == executable else {
                continue
            }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                end > start,
                let address = UnsafeMutableRawPointer(bitPattern: start)
            else { continue }
            if madvise(address, Int(end - start), MADV_DONTNEED) == 0 { released += Int(end - start) }
        }
        return released
    }
}
