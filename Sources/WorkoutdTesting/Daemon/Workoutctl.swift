import Foundation
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `workoutctl` binary as a person would.
///
/// `$WORKOUTCTL_BINARY`, or the one built beside the test bundle.
public enum Workoutctl {
    /// What one run printed and how it exited.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        /// Stdout's lines, without the final empty one.
        public var lines: [String] {
            stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
    }

    public static func binaryPath() throws -> String {
        try BuiltExecutable.path(named: "workoutctl", overriddenBy: "WORKOUTCTL_BINARY")
    }

    /// Runs `workoutctl arguments…` to completion; kills it if it outlives `timeout`. `binary` replaces the
    /// built workoutctl (e.g. a symlink named workoutctl to workoutd, as installed).
    public static func run(
        _ arguments: [String],
        binary: String? = nil,
        timeout: Duration = .seconds(60)
    ) throws -> Output {
        let directory = FileManager.default.temporaryDirectory
        let out = directory.appendingPathComponent("workoutctl-\(UUID().uuidString).out")
        let err = directory.appendingPathComponent("workoutctl-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: out.path, contents: nil),
            FileManager.default.createFile(atPath: err.path, contents: nil)
        else { throw TestingError("cannot create the output files in \(directory.path)") }
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary ?? binaryPath())
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                process.waitUntilExit()
                throw TestingError("workoutctl \(arguments.joined(separator: " ")) still running after \(timeout)")
            }
            usleep(2_000)
        }
        return Output(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        )
    }

    /// Starts a long-running `workoutctl` (e.g. `events`) whose stdout is read line by line.
    public static func start(_ arguments: [String]) throws -> Stream {
        try Stream(arguments: arguments)
    }

    /// A running `workoutctl` and its stdout.
    public final class Stream: @unchecked Sendable {
        public let process = Process()
        private let pipe = Pipe()
        private var buffer: [UInt8] = []

        init(arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: try Workoutctl.binaryPath())
            process.arguments = arguments
            process.standardOutput = pipe
            process.standardError = FileHandle.standardError
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        /// The next line it printed; throws if none arrives within `timeout` or it exits first.
        public func readLine(timeout: Duration = .seconds(30)) throws -> String {
            let fd = pipe.fileHandleForReading.fileDescriptor
            let deadline = ContinuousClock.now + timeout
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { buffer.removeSubrange(...newline) }
                    return String(decoding: buffer[..<newline], as: UTF8.self)
                }
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw TestingError("workoutctl printed no line within \(timeout)") }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let milliseconds = remaining.inMilliseconds + 1
                guard poll(&pfd, 1, Int32(milliseconds)) > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65536)
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 {
                    throw TestingError(
                        "workoutctl exited (\(process.isRunning ? "running" : "\(process.terminationStatus)")) before printing a line"
                    )
                }
                buffer.append(contentsOf: chunk[..<n])
            }
        }

        /// Ctrl-C: SIGINT, then waits for it to exit and returns its status.
        @discardableResult
        public func interrupt(timeout: Duration = .seconds(5)) throws -> Int32 {
            kill(process.processIdentifier, SIGINT)
            let deadline = ContinuousClock.now + timeout
            while process.isRunning {
                guard ContinuousClock.now < deadline else {
                    process.terminate()
                    throw TestingError("workoutctl ignored SIGINT for \(timeout)")
                }
                usleep(5_000)
            }
            return process.terminationStatus
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }
}
