import Foundation
import Synchronization
import WorkoutProtocol
import WorkoutdTesting

/// Pipelined commands through several served devices at once.
///
/// Each device alternates `start_workout`/`end_workout` (every one acknowledged) with a bounded number in flight.
enum Throughput {
    static let window = 64
    static let chunk = 16

    /// Commands acknowledged per second across `wearables`, each sending `commandsPerDevice`.
    static func measure<C: Collection<MockWearable>>(_ wearables: C, commandsPerDevice: Int) throws -> Double {
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        let start = ContinuousClock.now
        for wearable in wearables {
            let slots = DispatchSemaphore(value: window)
            group.enter()
            Thread {
                defer { group.leave() }
                var sent = 0
                while sent < commandsPerDevice {
                    let batch = min(chunk, commandsPerDevice - sent)
                    var bytes: [UInt8] = []
                    for offset in 0..<batch {
                        slots.wait()
                        bytes += Array((command(number: sent + offset) + "\n").utf8)
                    }
                    guard wearable.write(bytes) else {
                        failures.withLock { $0.append("\(wearable.tty.devnode): write failed") }
                        return
                    }
                    sent += batch
                }
            }.start()
            group.enter()
            Thread {
                defer { group.leave() }
                for number in 0..<commandsPerDevice {
                    guard let line = wearable.readLineBlocking(timeout: .seconds(10)) else {
                        failures.withLock { $0.append("\(wearable.tty.devnode): no reply to command \(number)") }
                        // Unblock the writer so the run ends.
                        for _ in 0..<window { slots.signal() }
                        return
                    }
                    if !line.contains(#""status":"ok""#) {
                        failures.withLock { $0.append("\(wearable.tty.devnode): \(line)") }
                    }
                    slots.signal()
                }
            }.start()
        }
        group.wait()
        let elapsed = ContinuousClock.now - start
        if let failure = failures.withLock({ $0.first }) {
            throw PlugSession.BenchmarkError(description: failure)
        }
        let seconds = elapsed.inSeconds
        return Double(wearables.count * commandsPerDevice) / seconds
    }

    private static func command(number: Int) -> String {
        number % 2 == 0
            ? #"{"command_type":"start_workout","location":"Bench","date":"2020-03-16 19:45:13 +0000","intensityLevel":5,"id":\#(number)}"#
            : #"{"command_type":"end_workout","id":\#(number)}"#
    }
}
