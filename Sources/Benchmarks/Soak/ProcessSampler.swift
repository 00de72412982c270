import Foundation

/// One reading of a process's resident memory and open descriptors, from `/proc`.
struct ProcessSample: Sendable {
    var elapsed: Duration
    var residentKiB: Int
    var openDescriptors: Int
    /// Bytes the never-reading device had got into the daemon by then.
    var stuckDeviceBytes = 0

    /// Reads `/proc/PID/status` (VmRSS) and counts `/proc/PID/fd`; nil when the process is gone.
    static func take(pid: Int32, elapsed: Duration) -> ProcessSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }),
              let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        return ProcessSample(elapsed: elapsed, residentKiB: kib, openDescriptors: descriptors.count)
    }
}
