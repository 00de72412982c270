#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The state directory's single owner: an exclusive `flock` on `<state_dir>/workoutd.lock`, held for the life
/// of the process (the kernel drops it when the process ends, however it ends), with the owner's pid inside
/// so a second daemon can say who holds it. The descriptor is deliberately never closed.
enum StateDirectoryLock {
    static let fileName = "workoutd.lock"
    /// EX_CANTCREAT from sysexits(3), as for a database that cannot be used.
    static let exitStatus: Int32 = 73

    /// Another process holds the directory, or the lock file cannot be made.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    static func acquire(stateDirectory: String) throws(Refusal) {
        let path = (stateDirectory as NSString).appendingPathComponent(Self.fileName)
        do {
            try FileManager.default.createDirectory(
                atPath: stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw Refusal(description: "cannot create state directory \(stateDirectory): \(error.localizedDescription)")
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Refusal(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.readPID(fd)
            close(fd)
            guard reason == EWOULDBLOCK else {
                throw Refusal(description: "cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            throw Refusal(description: "state directory \(stateDirectory) is in use by pid \(holder.map(String.init) ?? "unknown") (lock \(path))")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
