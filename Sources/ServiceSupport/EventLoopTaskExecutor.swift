import NIOCore

/// Runs a task's nonisolated parts on one event loop's thread.
///
/// It serves `Task(executorPreference:)` and `withTaskExecutorPreference`: a batch submitted from a device's pipeline
/// starts, reaches its session (placed on the same loop) and comes back without a thread hop; share delivery runs on
/// its low-priority loop.
public final class EventLoopTaskExecutor: TaskExecutor {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
