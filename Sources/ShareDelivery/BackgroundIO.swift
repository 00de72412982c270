import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
import ServiceSupport
#endif

/// The thread share delivery runs on, at the lowest CPU priority: its passes and its blocking file I/O.
///
/// Serving devices is what the daemon is for; encoding payloads, writing spool files and waiting for
/// their syncs is background work that can wait. On a thread of its own under the `SCHED_IDLE` policy
/// (nice 19 where that is refused) it runs only on a CPU nothing else wants, and a woken device loop
/// preempts it at once: run on Swift's cooperative pool instead, a pass of a hundred shares held a CPU
/// for milliseconds that a device's reply then waited behind. Blocking calls also stay off that pool.
enum BackgroundIO {
    private static let loop: any EventLoop = {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()
        loop.execute { lowerThisThreadsPriority() }
        return loop
    }()

    /// For `withTaskExecutorPreference`: a task's nonisolated async code then runs on the thread.
    static let executor = EventLoopTaskExecutor(loop)

    /// Runs blocking `body` on the thread.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(executor) { try body() }
    }

    /// `SCHED_IDLE` is 5 in Linux's ABI; Glibc's module does not export the name.
    private static let schedIdle: CInt = 5

    private static func lowerThisThreadsPriority() {
        var parameters = sched_param(sched_priority: 0)
        if sched_setscheduler(0, schedIdle, &parameters) != 0 {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        }
    }
}
