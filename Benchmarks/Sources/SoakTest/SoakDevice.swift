import Foundation
import Synchronization
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// One simulated wearable in the soak run, driven on its own thread with blocking I/O.
final class SoakDevice: @unchecked Sendable {
    /// What one device saw.
    struct Tally: Sendable {
        var name: String
        var replies = 0
        var batches = 0
        var replugs = 0
        var bytesSent = 0
        /// Workouts started and shares queued: what an in-memory store keeps for good.
        var storedRecords = 0
        var failure: String?
    }

    private let name: String
    private let link: ReplugLink
    private var traffic: SoakTraffic
    private var probes = 0
    private(set) var tally: Tally

    init(name: String, link: ReplugLink, firstID: Int64) {
        self.name = name
        self.link = link
        traffic = SoakTraffic(firstID: firstID)
        tally = Tally(name: name)
    }

    /// Sends batches and checks every reply until `deadline`, replugging now and then.
    /// Unplugs happen only between batches, so every line sent must be answered.
    func run(until deadline: ContinuousClock.Instant, replugPercent: Int) {
        var rng = SystemRandomNumberGenerator()
        do {
            while ContinuousClock.now < deadline {
                if Int.random(in: 0..<100, using: &rng) < replugPercent {
                    try link.replug()
                    tally.replugs += 1
                    try waitUntilServed()
                }
                let batch = traffic.batch(of: Int.random(in: 1...40, using: &rng), using: &rng)
                let sent = ContinuousClock.now
                var offset = 0
                while offset < batch.bytes.count {
                    let end = min(batch.bytes.count, offset + Int.random(in: 1...8192, using: &rng))
                    try link.wearable.write(Array(batch.bytes[offset..<end]))
                    offset = end
                }
                tally.bytesSent += batch.bytes.count
                for line in try link.wearable.readLines(batch.replies, timeout: .seconds(30)) {
                    // A command ended by CRLF is answered with CRLF (serial.reply_line_ending auto): that CR is the
                    // line's ending, not part of the reply.
                    var bytes = Array(line.utf8)
                    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                    if try ReplyLineCheck.summary(of: bytes + [UInt8(ascii: "\n")]).isSuccess,
                        line.contains(#""command_type":"start_workout""#)
                            || line.contains(#""command_type":"share_workout""#)
                    {
                        tally.storedRecords += 1
                    }
                }
                tally.replies += batch.replies
                tally.batches += 1
                ReplyLatency.shared.record(ContinuousClock.now - sent)
            }
        } catch {
            tally.failure = "\(name): \(error)"
        }
    }

    /// Probes until the daemon answers on the current pty.
    ///
    /// A line written before the daemon opened the node may be lost, so each probe has its own id and only the latest
    /// one counts.
    func waitUntilServed(timeout: Duration = .seconds(30)) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            probes += 1
            let id = "probe-\(name)-\(probes)"
            try link.wearable.send(#"{"id":"\#(id)","command_type":"share_workout","service":"probe"}"#)
            while let line = try? link.wearable.readLine(timeout: .milliseconds(500)) {
                if line.contains("\"\(id)\"") { return }
                guard line.contains("\"probe-\(name)-") else {
                    throw SoakFailure("\(name): unexpected reply while waiting for the daemon: \(line)")
                }
            }
        }
        throw SoakFailure("\(name): the daemon did not serve \(link.path) within \(timeout)")
    }
}

/// The device that never reads.
///
/// It writes commands as fast as the line takes them, so the daemon's replies back up. The daemon must stop reading it
/// rather than buffer without bound.
final class StuckDevice: @unchecked Sendable {
    let wearable: SimulatedWearable
    /// Read by the sampler while the device runs: it must level off once the daemon stops reading.
    let bytesAccepted = Atomic<Int>(0)

    init() throws {
        wearable = try SimulatedWearable()
    }

    func run(until deadline: ContinuousClock.Instant) {
        var traffic = SoakTraffic(firstID: 9_000_000_000)
        var rng = SystemRandomNumberGenerator()
        var pending: ArraySlice<UInt8> = []
        while ContinuousClock.now < deadline {
            if pending.isEmpty { pending = traffic.batch(of: 50, using: &rng).bytes[...] }
            let written = pending.withUnsafeBytes { Glibc.write(wearable.fd, $0.baseAddress, $0.count) }
            if written > 0 {
                bytesAccepted.add(written, ordering: .relaxed)
                pending = pending.dropFirst(written)
            } else {
                usleep(50_000)  // the line is full: the daemon has stopped reading, as it should
            }
        }
    }
}
