import Foundation

/// CPU time (user and system, every thread) of processes and all their descendants, read from /proc.
enum ProcessCPU {
    /// Seconds of CPU `roots` and their descendants have used so far.
    ///
    /// Descendants found now: a server's backends come and go, so a step's figure is the difference of two readings
    /// over the processes alive at both; short-lived backends are few here (the pooler keeps its connections).
    static func seconds(ofTreesRootedAt roots: [Int32]) -> Double {
        var parents: [Int32: Int32] = [:]
        var ticks: [Int32: Int] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm) ": state ppid … utime(14) stime(15), counted from the state field as 3.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let parent = Int32(fields[1]), let user = Int(fields[11]),
                let system = Int(fields[12])
            else { continue }
            parents[pid] = parent
            ticks[pid] = user + system
        }
        var inTree = Set(roots)
        var grew = true
        while grew {
            grew = false
            for (pid, parent) in parents where !inTree.contains(pid) && inTree.contains(parent) {
                inTree.insert(pid)
                grew = true
            }
        }
        let total = inTree.reduce(0) { $0 + (ticks[$1] ?? 0) }
        return Double(total) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// This process's own CPU seconds.
    static func ownSeconds() -> Double {
        seconds(ofTreesRootedAt: [getpid()])
    }
}

extension ProcessCPU {
    /// Files (and sockets) this process holds open.
    static func openFiles() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    /// How many it may hold (RLIMIT_NOFILE, the soft limit).
    static func openFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int(limit.rlim_cur)
    }
}
