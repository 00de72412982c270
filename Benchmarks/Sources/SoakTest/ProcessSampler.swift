import Foundation

/// One reading of a process's resident memory and open descriptors, from `/proc`.
struct ProcessSample: Sendable {
    var elapsed: Duration
    var residentKiB: Int
    var openDescriptors: Int
    /// Of those, files under the daemon's state directory.
    ///
    /// The SQLite pool opens its reader connections lazily (each a database and a WAL descriptor) and the spool writes
    /// temporary files, so this count may rise to a bound; everything else (devices, sockets, loops) must not change.
    var stateDescriptors = 0
    /// Bytes the never-reading device had got into the daemon by then.
    var stuckDeviceBytes = 0
    /// What the descriptors outside the state directory point at, so a leak report names what is left open.
    ///
    /// These are the `/proc/PID/fd` links, e.g. `socket:[123]`, `anon_inode:[eventfd]`.
    var otherTargets: [String] = []
    /// Threads, the database and its WAL in bytes, and the reply latency since the previous sample.
    ///
    /// Threads are counted in `/proc/PID/task`; the latency is that of the batches answered since the previous sample,
    /// in milliseconds from the first byte written to the last reply read.
    var threads = 0
    var databaseBytes = 0
    var walBytes = 0
    var latencyP50Milliseconds = 0.0
    var latencyP99Milliseconds = 0.0

    var otherDescriptors: Int { openDescriptors - stateDescriptors }

    /// The kinds of descriptor that `later` holds more or fewer of than this sample.
    ///
    /// A kind is `socket`, `anon_inode:[eventfd]` or a path, and the change reads as "+1 socket, -1 /dev/pts/3"; inode
    /// numbers are dropped, so a descriptor reopened is not a change.
    func descriptorChanges(to later: ProcessSample) -> String {
        func kinds(_ targets: [String]) -> [String: Int] {
            targets.reduce(into: [:]) { counts, target in
                let kind = target.hasPrefix("socket:") ? "socket" : target.hasPrefix("pipe:") ? "pipe" : target
                counts[kind, default: 0] += 1
            }
        }
        let before = kinds(otherTargets)
        let after = kinds(later.otherTargets)
        return Set(before.keys).union(after.keys).sorted().compactMap { kind in
            let change = after[kind, default: 0] - before[kind, default: 0]
            return change == 0 ? nil : "\(change > 0 ? "+" : "")\(change) \(kind)"
        }.joined(separator: ", ")
    }

    /// Reads the process's RSS and descriptors, telling apart those on files under `stateDirectory`.
    ///
    /// It reads `/proc/PID/status` (VmRSS) and counts `/proc/PID/fd`; nil when the process is gone.
    static func take(pid: Int32, elapsed: Duration, stateDirectory: String) -> ProcessSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }
            ),
            let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        let targets = descriptors.map {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "?"
        }
        let others = targets.filter { !$0.hasPrefix(stateDirectory + "/") }
        var sample = ProcessSample(
            elapsed: elapsed,
            residentKiB: kib,
            openDescriptors: descriptors.count,
            stateDescriptors: targets.count - others.count,
            otherTargets: others
        )
        sample.threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0
        func size(_ name: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: stateDirectory + "/" + name))?[.size] as? Int) ?? 0
        }
        sample.databaseBytes = size("workoutd.sqlite")
        sample.walBytes = size("workoutd.sqlite-wal")
        return sample
    }
}
