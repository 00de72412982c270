import Foundation
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// A wearable on a pty that the daemon reaches through a fixed symlink, as through a udev alias.
///
/// The daemon keys a device's session (and its remembered replies) by the configured path, so a
/// restarted daemon must see the same path; ``replug()`` puts a fresh pty behind it.
final class SymlinkedWearable: @unchecked Sendable {
    /// The path the daemon is told to serve (`--device`).
    let devicePath: String
    private(set) var wearable: SimulatedWearable

    init(in directory: String) throws {
        devicePath = directory + "/ttyWEARABLE0"
        wearable = try SimulatedWearable()
        try Self.point(devicePath, at: wearable.devicePath)
    }

    /// A new pty behind the same path; the old one is unplugged.
    func replug() throws {
        let next = try SimulatedWearable()
        try Self.point(devicePath, at: next.devicePath)
        wearable.unplug()
        wearable = next
    }

    /// Replaces the link atomically (rename over it), so the daemon never sees it missing.
    private static func point(_ link: String, at target: String) throws {
        let staging = link + ".new"
        unlink(staging)
        guard symlink(target, staging) == 0, rename(staging, link) == 0 else {
            throw TestingError("cannot point \(link) at \(target): \(String(cString: strerror(errno)))")
        }
    }
}
