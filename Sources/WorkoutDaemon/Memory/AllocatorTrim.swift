import CMalloc
import Dispatch

/// Gives the allocator's free pages back to the kernel (`malloc_trim`), off the event loops.
///
/// ``MemoryRelease`` calls it once a minute while commands flow and once when they stop.
///
/// ``AllocatorLimits`` stop the arenas keeping their free tops, but what a burst frees between blocks still in use
/// stays resident: with two arenas and fixed thresholds, RSS still rose under load, most of the growth free
/// chunks inside the arenas, and one `malloc_trim(0)` gave most of it back
/// (docs/decisions/0003-allocator-and-memory-release.md).
/// Trimming walks the free lists of both arenas (holding each arena's lock meanwhile) and advises the kernel to
/// drop the whole pages inside free chunks; reusing them later costs their page faults.
enum AllocatorTrim {
    static func trim() {
        // Not on the event loop that fired the timer: it serves devices, and a trim takes milliseconds.
        DispatchQueue.global(qos: .utility).async { _ = malloc_trim(0) }
    }
}
