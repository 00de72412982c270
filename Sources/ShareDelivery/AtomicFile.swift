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

    /// Replaces each file: written and fsynced under a temporary name, renamed into place, and each
    /// directory fsynced once for all the renames into it. A file counts as written only once all of that
    /// succeeded for it. (One `syncfs` for the batch instead of an fsync per file was measured: it hands
    /// the writeback to the kernel's flusher threads, which run at normal priority, and device replies
    /// waited behind them twice as long at the 99th percentile.)
    static func write(_ files: [Replacement]) -> [Result<Void, any Error>] {
        var results = [Result<Void, any Error>](repeating: .success(()), count: files.count)
        var createdDirectories = Set<String>()
        var temporaries: [(index: Int, path: String)] = []
        for (index, file) in files.enumerated() {
            let directory = file.destination.deletingLastPathComponent()
            do {
                if createdDirectories.insert(directory.path).inserted {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                }
                let temporary = directory.appendingPathComponent(".\(file.destination.lastPathComponent).\(getpid()).tmp").path
                try writeFile(file.data, to: temporary)
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
                if fd < 0 { failure("open", directory) }
                else if fsync(fd) != 0 { failure("fsync", directory) }
                else { nil }
            if fd >= 0 { close(fd) }
            if let failed {
                for index in indices { results[index] = .failure(failed) }
            }
        }
        return results
    }

    /// Creates (or truncates) `path` with `data` and fsyncs it; removes it on failure.
    private static func writeFile(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create", path) }
        do {
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
