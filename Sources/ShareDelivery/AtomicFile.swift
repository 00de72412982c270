import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Durable whole-file replacement: temp file, fsync, rename, fsync of the directory.
enum AtomicFile {
    static func write(_ data: Data, to destination: URL) throws {
        let directory = destination.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(destination.lastPathComponent).\(getpid()).tmp")

        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create", temporary) }
        do {
            try data.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, base + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw failure("write", temporary)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw failure("fsync", temporary) }
        } catch {
            close(fd)
            unlink(temporary.path)
            throw error
        }
        close(fd)
        guard rename(temporary.path, destination.path) == 0 else {
            let error = failure("rename", temporary)
            unlink(temporary.path)
            throw error
        }
        // The rename is durable only once the directory entry is on disk.
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("open", directory) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("fsync", directory) }
    }

    private static func failure(_ operation: String, _ url: URL) -> ShareDeliveryError {
        ShareDeliveryError("\(operation) \(url.path) failed: \(String(cString: strerror(errno)))")
    }
}
