import Foundation

/// One reading of a process's resident memory and open descriptors, from `/proc`.
struct ProcessSample: Sendable {
    var elapsed: Duration
    var residentKiB: Int
    var openDescriptors: Int
    /// Of those, files under the daemon's state directory: the SQLite pool opens its reader
    /// connections lazily (each a database and a WAL descriptor) and the spool writes temporary files,
    /// so this count may rise to a bound; everything else (devices, sockets, loops) must not change.
    var stateDescriptors = 0
    /// Bytes the never-reading device had got into the daemon by then.
    var stuckDeviceBytes = 0

    var otherDescriptors: Int { openDescriptors - stateDescriptors }

    /// Reads `/proc/PID/status` (VmRSS) and counts `/proc/PID/fd`, telling apart descriptors on files
    /// under `stateDirectory`; nil when the process is gone.
    static func take(pid: Int32, elapsed: Duration, stateDirectory: String) -> ProcessSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }),
              let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        let state = descriptors.count(where: {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))?.hasPrefix(stateDirectory + "/") == true
        })
        return ProcessSample(elapsed: elapsed, residentKiB: kib, openDescriptors: descriptors.count, stateDescriptors: state)
    }
}
