import Foundation

/// A small tmpfs mounted for one test, so the disk can really fill up. Needs root and mount permission.
public struct TmpfsMount: Sendable {
    public let path: String

    /// Whether `mount -t tmpfs` works here (root in a namespace that allows it); probed once.
    public static let isPermitted: Bool = {
        guard let probe = try? TmpfsMount(sizeKiB: 64) else { return false }
        probe.unmount()
        return true
    }()

    public init(sizeKiB: Int) throws {
        path =
            URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "workoutd-tmpfs-\(UUID().uuidString.prefix(8))"
            ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", "-t", "tmpfs", "-o", "size=\(sizeKiB)k,mode=0755", "tmpfs", path) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw TestingError("mount -t tmpfs on \(path) failed (needs root with CAP_SYS_ADMIN)")
        }
    }

    public func unmount() {
        _ = Self.run("/bin/umount", "-l", path)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Fills the file system: writes zeros to `filler` until the disk is full.
    public func fill(_ filler: String = "filler") throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: createEmpty(filler)))
        defer { try? handle.close() }
        let chunk = Data(count: 4096)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        let small = Data(count: 1)
        while (try? handle.write(contentsOf: small)) != nil {}
    }

    /// Frees what ``fill(_:)`` took.
    public func free(_ filler: String = "filler") throws {
        try FileManager.default.removeItem(atPath: path + "/" + filler)
    }

    private func createEmpty(_ name: String) -> String {
        let file = path + "/" + name
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        return file
    }

    /// Runs a command to completion, output discarded, and returns its exit status (-1 if it cannot start).
    @discardableResult
    public static func run(_ arguments: String...) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
