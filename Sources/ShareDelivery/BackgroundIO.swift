#if canImport(Glibc)
import Glibc
#endif
import NIOPosix

/// The thread that does share delivery's blocking file I/O, at the lowest CPU priority.
///
/// Serving devices is what the daemon is for; writing spool files and waiting for their fsyncs is
/// background work that can wait. A thread of its own keeps blocking calls off Swift's cooperative pool,
/// and the `SCHED_IDLE` policy (nice 19 where that is refused) makes it run only on a CPU nothing else
/// wants: the scheduler also counts a CPU running only such a thread as idle when it places a woken
/// device loop. Both are per thread on Linux. Deliveries run one at a time, so one thread is enough.
enum BackgroundIO {
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive {
            // Every time, not once: cheap, and right even if the pool ever gets a fresh thread.
            lowerThisThreadsPriority()
            return try body()
        }
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
