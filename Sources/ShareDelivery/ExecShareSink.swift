import CPosixTTY
import Foundation
import Synchronization
import WorkoutEngine

#if canImport(Glibc)
import Glibc
#endif

/// Runs a configured command with the share's JSON on stdin; exit status 0 is a delivery.
///
/// The command is an argument vector, not a shell line (a program without a `/` is looked up in `PATH`).
/// It inherits the daemon's stderr, so its complaints land in the journal, and nothing else of the daemon:
/// - its environment is ``childEnvironment(from:)``: `PATH` and the locale (`LANG`, `LC_*`) only, so no
///   `WORKOUTD_*` setting, replication URL or other secret of the daemon's environment reaches it;
/// - every signal at its default disposition and none blocked (the daemon ignores SIGPIPE; a child that
///   inherited that would never die of writing to a closed pipe);
/// - no descriptor but stdin (the JSON), stdout (`/dev/null`) and stderr;
/// - a process group of its own, killed whole with SIGKILL when the command outlives the timeout or the
///   delivery task is cancelled (shutdown), so a script's grandchildren do not live on.
public struct ExecShareSink: ShareSink {
    public let command: [String]
    public let timeout: Duration
    /// The daemon's environment, from which the child gets only ``childEnvironment(from:)``.
    private let inheritedEnvironment: [String: String]

    public init(
        command: [String],
        timeout: Duration,
        inheritedEnvironment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.command = command
        self.timeout = timeout
        self.inheritedEnvironment = inheritedEnvironment
        // A command that exits without reading stdin must fail the attempt, not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
    }

    /// What a command's environment holds: `PATH` (a default one when the daemon has none) and the locale.
    public static func childEnvironment(from environment: [String: String]) -> [String: String] {
        var result = environment.filter { name, _ in name == "PATH" || name == "LANG" || name.hasPrefix("LC_") }
        if result["PATH"] == nil { result["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        return result
    }

    public func deliver(_ payload: SharePayload) async throws {
        guard let program = command.first, !program.isEmpty else {
            throw ShareDeliveryError("no command is configured for this sink")
        }
        let name = command.joined(separator: " ")
        let input = try payload.json() + Data("\n".utf8)
        let child: SpawnedCommand
        do {
            child = try SpawnedCommand(command, environment: Self.childEnvironment(from: inheritedEnvironment))
        } catch {
            throw ShareDeliveryError("\(name) could not be started: \(error)")
        }
        let timedOut = Atomic<Bool>(false)
        let limit = timeout
        let watchdog = Task {
            try await Task.sleep(for: limit)
            timedOut.store(true, ordering: .relaxed)
            child.killGroup()
        }
        defer { watchdog.cancel() }

        // The payload is far below a pipe's buffer, so this write does not wait on the child.
        child.feed(input)

        // Only ever finished with a success: cancellation kills the child, whose exit then arrives.
        do {
            try await withTaskCancellationHandler {
                try await child.exited.value()
            } onCancel: {
                child.killGroup()
            }
        } catch {
            child.killGroup()
            child.reap()
            throw error
        }
        let status = child.reap()
        if timedOut.load(ordering: .relaxed) {
            throw ShareDeliveryError("\(name) did not finish within \(limit) and was killed")
        }
        switch status {
        case .exited(0):
            return
        case .exited(let code):
            throw ShareDeliveryError("\(name) exited with status \(code)")
        case .killed(let signal):
            throw ShareDeliveryError("\(name) was killed by signal \(signal)")
        }
    }
}

/// One run of a command: spawned with posix_spawn, watched until it exits, killed through a pidfd.
///
/// A thread watches it.
///
/// Why its own and not Foundation's Process: Process passes the daemon's whole environment and signal
/// dispositions on, cannot start a process group, and kills by pid. Here the leader is waited for with
/// `WNOWAIT` and reaped only by ``reap()``: until then its pid cannot be reused, and neither can the
/// process group's id (the leader's pid), so ``killGroup()`` never hits a stranger; the leader itself is
/// signalled through its pidfd, which also reaches it should it have left its group.
final class SpawnedCommand: Sendable {
    enum Status: Sendable, Equatable {
        case exited(Int32)
        case killed(Int32)
    }

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    /// Finished (with success) once the command has exited; it is still unreaped then.
    let exited = OneShot<Void>()
    private let pidfd: Int32
    private let stdinWriter: Mutex<Int32>
    private let status = Mutex<Status?>(nil)

    init(_ command: [String], environment: [String: String]) throws {
        var pipeEnds: [Int32] = [-1, -1]
        guard wd_pipe_cloexec(&pipeEnds) == 0 else { throw SpawnError(description: String(cString: strerror(errno))) }
        defer { close(pipeEnds[0]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        // Descriptors the daemon opened without close-on-exec (or a library did) stay with the daemon.
        _ = wd_spawn_add_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        )

        var arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var variables = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in variables { free(variable) } }
        var pid: pid_t = 0
        // posix_spawnp looks a name without a `/` up in the daemon's PATH, the PATH the child gets too.
        let spawned = posix_spawnp(&pid, command[0], &actions, &attributes, &arguments, &variables)
        guard spawned == 0 else {
            close(pipeEnds[1])
            throw SpawnError(description: String(cString: strerror(spawned)))
        }
        self.pid = pid
        // Unreaped, the child's pid is still its own: the pidfd names it for good.
        pidfd = wd_pidfd_open(pid)
        stdinWriter = Mutex(pipeEnds[1])
        let exited = self.exited
        let child = pid
        Thread.detachNewThread {
            var info = siginfo_t()
            while waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            exited.finish(.success(()))
        }
    }

    /// Writes `data` to the command's stdin and closes it.
    ///
    /// A command that does not read it is its own affair.
    func feed(_ data: Data) {
        stdinWriter.withLock { fd in
            guard fd >= 0 else { return }
            data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count, let base = buffer.baseAddress {
                    let written = write(fd, base + offset, buffer.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written == -1 && errno == EINTR {
                        continue
                    } else {
                        break
                    }
                }
            }
            close(fd)
            fd = -1
        }
    }

    /// SIGKILL to the command's process group and to the command itself; a no-op once it has been reaped.
    func killGroup() {
        status.withLock { status in
            guard status == nil else { return }
            kill(-pid, SIGKILL)
            if pidfd >= 0 {
                _ = wd_pidfd_send_signal(pidfd, SIGKILL)
            } else {
                // No pidfd (a kernel before 5.3): the unreaped pid is still this command's.
                kill(pid, SIGKILL)
            }
        }
    }

    /// Reaps the command (once it has exited; waits for that) and returns how it ended.
    @discardableResult
    func reap() -> Status {
        status.withLock { status in
            if let status { return status }
            stdinWriter.withLock { fd in
                if fd >= 0 { close(fd) }
                fd = -1
            }
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            if pidfd >= 0 { close(pidfd) }
            // WIFEXITED and friends are macros Swift does not import.
            let result: Status = raw & 0x7f == 0 ? .exited((raw >> 8) & 0xff) : .killed(raw & 0x7f)
            status = result
            return result
        }
    }
}
