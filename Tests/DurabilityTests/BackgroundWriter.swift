import Foundation
import Synchronization
import WorkoutdTesting

/// Writes lines to the wearable's end on its own thread while the test reads replies.
///
/// A wearable that pipelines without waiting. Without a concurrent reader the pty would fill both ways and stall.
final class BackgroundWriter: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let written = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    init(_ wearable: SimulatedWearable, lines: [String], linesPerWrite: Int = 64) {
        let chunks = stride(from: 0, to: lines.count, by: linesPerWrite).map { start in
            let end = min(start + linesPerWrite, lines.count)
            return (count: end - start, bytes: Array(lines[start..<end].joined(separator: "\n").utf8) + [0x0A])
        }
        Thread { [self] in
            defer { finished.signal() }
            for chunk in chunks {
                guard !stopped.load(ordering: .relaxed) else { return }
                // A dead daemon makes writes fail or time out: that ends the load.
                guard (try? wearable.write(chunk.bytes, timeout: .seconds(5))) != nil else { return }
                written.add(chunk.count, ordering: .relaxed)
            }
        }.start()
    }

    /// Stops after the write in progress.
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Waits for the thread to end and returns how many lines it wrote completely.
    func join() -> Int {
        finished.wait()
        return written.load(ordering: .relaxed)
    }
}
