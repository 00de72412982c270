#if canImport(Glibc)
import Glibc
#endif
import NIOPosix

/// The thread that does share delivery's blocking file I/O, at the lowest CPU priority.
///
/// Serving devices is what the daemon is for; writing spool files and waiting for their fsyncs is
/// background work that can wait. A thread of its own keeps blocking calls off Swift's cooperative pool,
/// and nice 19 lets the kernel give the device loops the CPU first whenever both want it (on Linux the
/// nice value is per thread). Deliveries run one at a time anyway, so one thread is enough.
enum BackgroundIO {
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive {
            // Every time, not once: cheap, and right even if the pool ever gets a fresh thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            return try body()
        }
    }
}
