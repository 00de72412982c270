import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reading a secret from a file (the replication password, the web login token).
///
/// The file's own mode is checked on the descriptor that is read, so the check and the read are of the same file.
public enum PrivateFile {
    public struct ReadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Secrets are a line or a certificate, not megabytes.
    public static let maximumSize = 64 * 1024

    /// The text of `path` (UTF-8). With `requirePrivate`, a file that group or others may read or write
    /// (any of the mode's 077 bits) is refused with its mode and the fix; `credentialKey` names the key that
    /// takes the secret as a systemd credential instead, when there is one.
    public static func read(
        _ path: String,
        requirePrivate: Bool,
        credentialKey: String? = nil
    ) throws(ReadError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            throw ReadError(description: "\(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ReadError(description: "\(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ReadError(description: "\(path) is not a regular file") }
        let permissions = info.st_mode & 0o7777
        if requirePrivate, permissions & 0o077 != 0 {
            throw ReadError(
                description:
                    "\(path) is mode \(String(format: "%04o", permissions)): readable or writable by group or others; "
                    + "it must be 0600 or 0400 (chmod 600 \(path))"
                    + (credentialKey.map { ", or be given as a systemd credential (\($0))" } ?? "")
            )
        }
        var bytes = [UInt8](repeating: 0, count: maximumSize + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.read(fd, base + count, buffer.count - count)
            }
            if got > 0 {
                count += got
            } else if got == -1 && errno == EINTR {
                continue
            } else if got == 0 {
                break
            } else {
                throw ReadError(description: "\(path) cannot be read (\(String(cString: strerror(errno))))")
            }
        }
        guard count <= maximumSize else { throw ReadError(description: "\(path) is larger than \(maximumSize) bytes") }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            throw ReadError(description: "\(path) is not UTF-8 text")
        }
        return text
    }
}
