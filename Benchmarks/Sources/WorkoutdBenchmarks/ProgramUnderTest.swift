import BenchmarkSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program being benchmarked, started on a pty's device path, its output kept in a log for failures.
///
/// `DaemonProcess` in WorkoutdTesting starts only `workoutd`; the benchmark also runs the C echo baseline
/// and whatever command line a later storage backend needs, so it takes a shell command instead.
final class ProgramUnderTest {
    /// `NAME=COMMAND` from the command line.
    struct Specification {
        var name: String
        var command: String

        init(parsing text: String) throws(UsageError) {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw UsageError("expected NAME=COMMAND; got '\(text)'")
            }
            name = String(text[..<equals])
            command = String(text[text.index(after: equals)...])
            guard command.contains("{device}") else {
                throw UsageError("the command for '\(name)' has no {device} placeholder")
            }
        }
    }

    let specification: Specification
    private let process = Process()
    private let logURL: URL

    /// `run` numbers the program's starts within the benchmark.
    ///
    /// A command's `{run}` is replaced by it, so each start can have a state directory of its own.
    /// `environment` is added to the program's (the benchmark's own, less any WORKOUTD_* setting).
    init(_ specification: Specification, devicePath: String, run: Int, environment: [String: String] = [:]) throws {
        self.specification = specification
        logURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("workoutd-bench-\(getpid())-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            "exec "
                + specification.command
                .replacingOccurrences(of: "{device}", with: devicePath)
                .replacingOccurrences(of: "{run}", with: String(run)),
        ]
        // The run must not pick up a developer's WORKOUTD_* settings; a command that wants one says so with env(1).
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("WORKOUTD_") }
            .merging(environment) { _, added in added }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    /// The program's process id: the shell execs the command, so this is the program itself.
    var pid: pid_t { process.processIdentifier }

    /// What the program printed, for an error message.
    var log: String {
        (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    }

    /// SIGTERM, then SIGKILL if it lingers; the log is removed.
    func stop() {
        if process.isRunning {
            process.terminate()
            // Generous: under valgrind a graceful shutdown (and the profile dump) takes a while.
            let deadline = ContinuousClock.now + .seconds(60)
            while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(at: logURL)
    }
}
