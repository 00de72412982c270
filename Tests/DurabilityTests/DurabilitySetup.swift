import Foundation
import WorkoutdTesting

/// A state directory and a configuration of its own for each test.
///
/// So nothing on this machine (an /etc/workoutd, a running daemon's control socket) changes what is tested.
struct DurabilitySetup {
    let directory: String
    let stateDirectory: String
    let configFile: String

    init(stateDirectory: String? = nil) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "wd-durability-\(UUID().uuidString.prefix(8))"
            ).path
        self.stateDirectory = stateDirectory ?? directory + "/state"
        configFile = directory + "/workoutd.yaml"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The kill -9 load queues 1,500 shares from one device without a pause, and delivery waits for one: the
        // per-device cap on undelivered shares (tested on its own) would refuse a third of them.
        try "log_level: debug\ndiscovery:\n  enabled: false\nlimits:\n  pending_shares_per_device: 0\n"
            .write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    /// The real daemon with the durable store, serving `device`.
    func startDaemon(device: String?) throws -> DaemonProcess {
        try DaemonProcess(
            arguments: ["--config", configFile, "--state-dir", stateDirectory, "--control-socket", "none"]
                + (device.map { ["--device", $0] } ?? [])
        )
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
