import Foundation
import Synchronization
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

        let exit = ProcessExit()
        process.terminationHandler = { finished in exit.finish(status: finished.terminationStatus, reason: finished.terminationReason) }
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

        let (status, reason) = await withTaskCancellationHandler {
            await exit.wait()
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

/// Hands a child's termination from Foundation's handler thread to the awaiting task.
private final class ProcessExit: Sendable {
    private struct State {
        var result: (Int32, Process.TerminationReason)?
        var waiter: CheckedContinuation<(Int32, Process.TerminationReason), Never>?
    }

    private let state = Mutex(State())

    func finish(status: Int32, reason: Process.TerminationReason) {
        let waiter = state.withLock { state in
            state.result = (status, reason)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: (status, reason))
    }

    func wait() async -> (Int32, Process.TerminationReason) {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> (Int32, Process.TerminationReason)? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
