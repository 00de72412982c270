import Foundation
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// A socat pty pair with stable link paths, as a user sets one up.
///
/// The daemon serves `deviceLink`, the test talks on `wearableLink`. Restarting socat recreates the same paths (an
/// unplug and replug).
final class SocatLink: @unchecked Sendable {
    let deviceLink: String
    let wearableLink: String
    private var process: Process?

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("wd-\(UUID().uuidString.prefix(8))")
            .path
        deviceLink = base + "-device"
        wearableLink = base + "-wearable"
        try start()
    }

    func start() throws {
        let socat = Process()
        socat.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
        socat.arguments = ["pty,raw,echo=0,link=\(deviceLink)", "pty,raw,echo=0,link=\(wearableLink)"]
        socat.standardError = FileHandle.nullDevice
        try socat.run()
        process = socat
        let deadline = Date().addingTimeInterval(5)
        while !(FileManager.default.fileExists(atPath: deviceLink)
            && FileManager.default.fileExists(atPath: wearableLink))
        {
            guard Date() < deadline else { throw TestingError("socat did not create its links") }
            usleep(10_000)
        }
    }

    /// Unplugs: socat exits and its links disappear.
    func stop() {
        guard let process, process.isRunning else { return }
        // SIGKILL, not SIGTERM: children spawned from test threads inherit a blocked signal mask,
        // and socat would ignore SIGTERM. Killed, it leaves its links behind, so remove them here.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: deviceLink)
        try? FileManager.default.removeItem(atPath: wearableLink)
        self.process = nil
    }

    deinit { stop() }
}

/// Resident set size of a process, in KiB, from /proc.
func residentKiB(of pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return -1 }
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}
