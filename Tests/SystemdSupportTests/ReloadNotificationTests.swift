import Foundation
import Glibc
import Testing
import WorkoutdTesting

/// The real daemon under a real `NOTIFY_SOCKET`.
///
/// systemd sees a reload begin (`RELOADING=1` with the monotonic time) and end (`READY=1`), whether the new
/// configuration was applied or rejected.
@Suite(.enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct ReloadNotificationTests {
    /// Datagrams up to and including the next one that starts with `READY=1`.
    private func untilReady(_ listener: NotifySocketListener, _ daemon: DaemonProcess) async throws -> [String] {
        var messages: [String] = []
        while messages.last?.hasPrefix("READY=1") != true {
            guard let message = await listener.next(timeout: .seconds(30)) else {
                throw TestingError("no READY=1 after \(messages):\n\(daemon.log)")
            }
            messages.append(message)
        }
        return messages
    }

    @Test func aReloadIsBracketedByReloadingAndReady() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "notify-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("workoutd.yaml").path
        try "discovery:\n  enabled: false\n".write(toFile: config, atomically: true, encoding: .utf8)
        let listener = try NotifySocketListener()
        let daemon = try DaemonProcess(
            arguments: [
                "--config", config, "--state-dir", directory.appendingPathComponent("state").path, "--control-socket",
                "none",
            ],
            environment: ["NOTIFY_SOCKET": listener.path]
        )
        defer { daemon.stop() }
        #expect(try await untilReady(listener, daemon).count == 1, "start-up: READY=1 first")
        try daemon.waitForLog("configuration reload armed")

        daemon.signal(SIGHUP)
        let applied = try await untilReady(listener, daemon)
        #expect(applied.count == 2, "\(applied)")
        let reloading = applied.first?.split(separator: "\n") ?? []
        #expect(reloading.first == "RELOADING=1")
        #expect(
            reloading.dropFirst().first.map { $0.hasPrefix("MONOTONIC_USEC=") && UInt64($0.dropFirst(15)) != nil }
                == true
        )
        try daemon.waitForLog("configuration reloaded")

        // A rejected reload ends too: systemd must not be left waiting in "reloading".
        try "serial:\n  max_line_bytes: 5\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        let rejected = try await untilReady(listener, daemon)
        #expect(rejected.first?.hasPrefix("RELOADING=1\n") == true && rejected.count == 2, "\(rejected)")
        try daemon.waitForLog("configuration reload rejected")
    }
}
