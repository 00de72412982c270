import Synchronization
import WorkoutEngine

/// The devices' traffic as the delivery worker sees it.
///
/// A count of the batches sessions run, so a pass can wait for a pause in them.
///
/// Why wait: a pass's file work (create, write, fsync, rename) runs in the kernel, where a woken device loop
/// cannot preempt it even at `SCHED_IDLE`, and on a small hub the pass shares two CPUs with the devices' loops
/// and the tty's own work. Passes run beside a stream of commands were most of the distance between workoutd's
/// single-flight latency and its transport's (docs/benchmarks.md). A hub is quiet most of the time, so waiting
/// for a pause costs a share a few tens of milliseconds; the limit keeps shares moving under endless traffic.
final class DeviceTraffic: Sendable {
    private let batches = Atomic<UInt64>(0)

    /// Counts the batch that begins here, if one does; the worker's own deliveries are not traffic.
    func observe(_ emitted: EmittedEvents) {
        if emitted.beginsBatch { batches.add(1, ordering: .relaxed) }
    }

    /// Batches seen so far: compare two readings to learn whether devices were served in between.
    var batchesSeen: UInt64 { batches.load(ordering: .relaxed) }

    /// Returns once `quiet` has passed without a batch, or `limit` after the call, or on cancellation.
    /// It looks once per `quiet`, and only while a pass is waiting: at idle nothing runs.
    func pause(quiet: Duration, atMost limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        var seen = batchesSeen
        while !Task.isCancelled {
            let step = min(quiet, deadline - ContinuousClock.now)
            guard step > .zero else { return }
            try? await Task.sleep(for: step)
            let now = batchesSeen
            if now == seen { return }
            seen = now
        }
    }
}
