import NIOCore

/// Runs a task's nonisolated parts on one event loop, so a batch submitted from a device's pipeline
/// starts, reaches its session (placed on the same loop) and comes back without a thread hop.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
