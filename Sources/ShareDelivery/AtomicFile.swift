import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Durable whole-file replacement: temp file, fsync, rename, fsync of the directory.
enum AtomicFile {
    /// One file to replace.
    struct Replacement: Sendable {
        var data: Data
        var destination: URL
    }

    /// Replaces each file: written and fsynced under a temporary name, then renamed into place.
    ///
    /// Each directory is fsynced once for all the renames into it. A file counts as written only once all of that
    /// succeeded for it. (One `syncfs` for the batch instead of an fsync per file was tried: it hands the writeback to
    /// the kernel's flusher threads, which run at normal priority, and device replies waited behind them much longer in
    /// the tail.)
    static func write(_ files: [Replacement]) -> [Result<Void, any Error>] {
        var results = [Result<Void, any Error>](repeating: .success(()), count: files.count)
        var createdDirectories = Set<String>()
        var temporaries: [(index: Int, path: String)] = []
        for (index, file) in files.enumerated() {
            let directory = file.destination.deletingLastPathComponent()
            do {
                if createdDirectories.insert(directory.path).inserted {
                    try FileManager.default.createDirectory(
                        at: directory,
                        withIntermediateDirectories: true,
                        attributes: [.posixPermissions: 0o700]
                    )
                }
                let temporary = try writeTemporary(file.data, beside: file.destination)
                temporaries.append((index, temporary))
            } catch {
                results[index] = .failure(error)
            }
        }
        var renamedInto: [String: [Int]] = [:]
        for (index, temporary) in temporaries {
            let destination = files[index].destination
            guard rename(temporary, destination.path) == 0 else {
                results[index] = .failure(failure("rename", temporary))
                unlink(temporary)
                continue
            }
            renamedInto[destination.deletingLastPathComponent().path, default: []].append(index)
        }
        // The renames are durable only once the directory entries are on disk.
        for (directory, indices) in renamedInto {
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            let failed: (any Error)? =
                if fd < 0 { failure("open", directory) } else if fsync(fd) != 0 { failure("fsync", directory) } else {
                    nil
                }
            if fd >= 0 { close(fd) }
            if let failed {
                for index in indices { results[index] = .failure(failed) }
            }
        }
        return results
    }

    /// Spooled shares are the daemon's alone (0600), whatever the umask.
    static let fileMode: mode_t = 0o600

    /// Writes `data` to a new file beside `destination` and fsyncs it; returns its path. The name has 64 random
    /// bits and the file is created with `O_EXCL|O_NOFOLLOW`: nothing planted under a guessed name (a
    /// symlink, a file someone else holds open) is ever followed or written into.
    private static func writeTemporary(_ data: Data, beside destination: URL) throws -> String {
        let directory = destination.deletingLastPathComponent()
        for _ in 0..<8 {
            let suffix = String(UInt64.random(in: .min ... .max), radix: 16)
            let path = directory.appendingPathComponent(
                ".\(destination.lastPathComponent).\(suffix).tmp",
                isDirectory: false
            ).path
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fileMode)
            if fd < 0, errno == EEXIST { continue }
            guard fd >= 0 else { throw failure("create", path) }
            try writeFile(data, fd: fd, path: path)
            return path
        }
        throw ShareDeliveryError("create a temporary file in \(directory.path) failed: every random name was taken")
    }

    /// Writes `data` to the new file `fd` (at `path`), makes it 0600 and fsyncs it.
    ///
    /// Closes it, and removes it on failure.
    private static func writeFile(_ data: Data, fd: Int32, path: String) throws {
        do {
            guard fchmod(fd, fileMode) == 0 else { throw failure("chmod", path) }
            try data.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, base + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw failure("write", path)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw failure("fsync", path) }
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        close(fd)
    }

    private static func failure(_ operation: String, _ path: String) -> ShareDeliveryError {
        ShareDeliveryError("\(operation) \(path) failed: \(String(cString: strerror(errno)))")
    }
}
