import Foundation
import Synchronization
import WorkoutEngine
#if canImport(Glibc)
import Glibc
#endif

/// Runs a configured command with the share's JSON on stdin; exit status 0 is a delivery.
///
/// The command is an argument vector, not a shell line (a program without a `/` is looked up in `PATH`).
/// It inherits the daemon's stderr, so its complaints land in the journal. Killed with SIGKILL when it
/// outlives the timeout or when the delivery task is cancelled (shutdown).
public struct ExecShareSink: ShareSink {
    public let command: [String]
    public let timeout: Duration

    public init(command: [String], timeout: Duration) {
        self.command = command
        self.timeout = timeout
        // A command that exits without reading stdin must fail the attempt, not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
    }

    public func deliver(_ payload: SharePayload) async throws {
        guard let program = command.first, !program.isEmpty else {
            throw ShareDeliveryError("no command is configured for this sink")
        }
        let process = Process()
        if program.contains("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(command.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
        }
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice

        // Hands the child's termination from Foundation's handler thread to this task.
        let exit = OneShot<(Int32, Process.TerminationReason)>()
        process.terminationHandler = { finished in exit.finish(.success((finished.terminationStatus, finished.terminationReason))) }
        do {
            try process.run()
        } catch {
            throw ShareDeliveryError("\(command.joined(separator: " ")) could not be started: \(error.localizedDescription)")
        }
        let pid = process.processIdentifier
        let timedOut = Atomic<Bool>(false)
        let limit = timeout
        let watchdog = Task {
            try await Task.sleep(for: limit)
            timedOut.store(true, ordering: .relaxed)
            kill(pid, SIGKILL)
        }
        defer { watchdog.cancel() }

        // The payload is far below a pipe's buffer, so this write does not wait on the child.
        let input = try payload.json() + Data("\n".utf8)
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()

        // Only ever finished with a success: cancellation kills the child, whose exit then arrives.
        let (status, reason) = try await withTaskCancellationHandler {
            try await exit.value()
        } onCancel: {
            kill(pid, SIGKILL)
        }
        let name = command.joined(separator: " ")
        if timedOut.load(ordering: .relaxed) {
            throw ShareDeliveryError("\(name) did not finish within \(limit) and was killed")
        }
        switch reason {
        case .exit where status == 0:
            return
        case .exit:
            throw ShareDeliveryError("\(name) exited with status \(status)")
        case .uncaughtSignal:
            throw ShareDeliveryError("\(name) was killed by signal \(status)")
        @unknown default:
            throw ShareDeliveryError("\(name) ended abnormally (\(status))")
        }
    }
}
