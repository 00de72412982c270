import Foundation
import Synchronization
import WorkoutdTesting

/// Many blocking clients at once, each on a thread of its own.
///
/// The sockets block, and Swift's cooperative pool has a thread per core that must not be held by them.
enum ClientThreads {
    /// Runs `body(index)` on `count` threads and waits for all; rethrows the first error.
    static func run(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        let group = DispatchGroup()
        let failure = Mutex<(any Error)?>(nil)
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    try body(index)
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

/// A count many threads add to.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }
    func raise(to candidate: Int) { value.max(candidate, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
