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

    static func write(_ data: Data, to destination: URL) throws {
        try write([Replacement(data: data, destination: destination)])[0].get()
    }

    /// Replaces each file; a directory is fsynced once for all the renames into it, and a file counts
    /// as written only once that fsync succeeded.
    static func write(_ files: [Replacement]) -> [Result<Void, any Error>] {
        var results: [Result<Void, any Error>] = []
        results.reserveCapacity(files.count)
        var createdDirectories = Set<String>()
        var renamedInto: [String: [Int]] = [:]
        for file in files {
            let directory = file.destination.deletingLastPathComponent()
            do {
                if createdDirectories.insert(directory.path).inserted {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                }
                try replace(file.data, at: file.destination, in: directory)
                renamedInto[directory.path, default: []].append(results.count)
                results.append(.success(()))
            } catch {
                results.append(.failure(error))
            }
        }
        // The renames are durable only once the directory entries are on disk.
        for (directory, indices) in renamedInto {
            let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            let failed: (any Error)? =
                if directoryFD < 0 { failure("open", URL(fileURLWithPath: directory)) }
                else if fsync(directoryFD) != 0 { failure("fsync", URL(fileURLWithPath: directory)) }
                else { nil }
            if directoryFD >= 0 { close(directoryFD) }
            if let failed {
                for index in indices { results[index] = .failure(failed) }
            }
        }
        return results
    }

    /// Writes `data` under a temporary name in `directory`, fsyncs it and renames it to `destination`.
    private static func replace(_ data: Data, at destination: URL, in directory: URL) throws {
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
    }

    private static func failure(_ operation: String, _ url: URL) -> ShareDeliveryError {
        ShareDeliveryError("\(operation) \(url.path) failed: \(String(cString: strerror(errno)))")
    }
}
