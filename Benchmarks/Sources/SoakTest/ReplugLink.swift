import Foundation
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// A stable device path over a pty that can be unplugged and replaced by a new one.
///
/// The path is a symlink, as udev makes under /dev/serial/by-id, so the daemon's reconnect on the same path is
/// exercised.
final class ReplugLink: @unchecked Sendable {
    let path: String
    private(set) var wearable: SimulatedWearable

    init(path: String) throws {
        self.path = path
        wearable = try SimulatedWearable()
        try Self.point(path, at: wearable.devicePath)
    }

    /// Plugs a new pty in under the same path, then pulls the old one.
    ///
    /// The daemon's read fails, it closes the old node and reopens the path.
    func replug() throws {
        let old = wearable
        wearable = try SimulatedWearable()
        try Self.point(path, at: wearable.devicePath)
        old.unplug()
    }

    /// Replaces the symlink atomically, so the daemon never finds the path missing.
    private static func point(_ link: String, at target: String) throws {
        let temporary = link + ".new"
        unlink(temporary)
        guard symlink(target, temporary) == 0, rename(temporary, link) == 0 else {
            throw SoakFailure("cannot point \(link) at \(target): \(String(cString: strerror(errno)))")
        }
    }
}
