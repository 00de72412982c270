import Histogram
import WorkoutProtocol
import WorkoutdTesting

/// Single-flight latency: one command written, its whole reply read, then the next.
///
/// Each round trip timed from the write to the reply's newline.
enum SingleFlightLatency {
    struct Result {
        var histogram: Histogram<UInt64>
        /// The measured round trips' replies, for checking after the clock has stopped.
        var replies: [UInt8]

        func microseconds(atPercentile percentile: Double) -> Double {
            Double(histogram.valueAtPercentile(percentile)) / 1000
        }
    }

    /// Runs `warmUp` round trips unrecorded, then one recorded round trip per entry of `commands`.
    static func measure(_ master: MasterSide, warmUp: [CommandMix.Entry], commands: [CommandMix.Entry]) throws -> Result
    {
        // Nanoseconds, up to 10 s, three significant digits.
        var histogram = Histogram<UInt64>(highestTrackableValue: 10_000_000_000, numberOfSignificantValueDigits: .three)
        var replies: [UInt8] = []
        replies.reserveCapacity(commands.count * 128)
        var chunk = [UInt8](repeating: 0, count: 4096)
        var scratch: [UInt8] = []
        for entry in warmUp {
            _ = try roundTrip(master, entry.line, chunk: &chunk, into: &scratch)
        }
        for entry in commands {
            let elapsed = try roundTrip(master, entry.line, chunk: &chunk, into: &replies)
            let nanoseconds = elapsed.inNanoseconds
            _ = histogram.record(UInt64(max(nanoseconds, 1)))
        }
        return Result(histogram: histogram, replies: replies)
    }

    private static func roundTrip(
        _ master: MasterSide,
        _ line: [UInt8],
        chunk: inout [UInt8],
        into replies: inout [UInt8]
    ) throws -> Duration {
        let start = ContinuousClock.now
        let deadline = start + .seconds(10)
        try line.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                offset += try master.writeSome(UnsafeRawBufferPointer(rebasing: bytes[offset...]), until: deadline)
            }
        }
        while true {
            let n = try chunk.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) in
                try master.readSome(into: bytes, until: deadline)
            }
            replies.append(contentsOf: chunk[..<n])
            if chunk[n - 1] == UInt8(ascii: "\n") {
                let elapsed = ContinuousClock.now - start
                guard chunk[..<n].filter({ $0 == UInt8(ascii: "\n") }).count == 1 else {
                    throw TestingError("more than one reply line to a single command")
                }
                return elapsed
            }
        }
    }
}
