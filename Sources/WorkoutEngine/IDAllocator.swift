import Synchronization

/// Hands out workout and share ids, starting above what the store already holds.
///
/// Ids are allocated before a batch commits; a batch that fails to commit leaves a gap, never a reuse.
public final class IDAllocator: Sendable {
    private let next: Mutex<IDWatermark>

    public init(after watermark: IDWatermark = IDWatermark()) {
        next = Mutex(watermark)
    }

    public func nextWorkoutID() -> Int64 {
        next.withLock {
            $0.workout += 1
            return $0.workout
        }
    }

    public func nextShareID() -> Int64 {
        next.withLock {
            $0.share += 1
            return $0.share
        }
    }
}
