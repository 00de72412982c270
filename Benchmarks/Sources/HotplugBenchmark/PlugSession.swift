import Foundation
import WorkoutdTesting

/// Plugs fresh wearables into the testbed and times them, from the wearable's side.
struct PlugSession: Sendable {
    let testbed: MockUdevTestbed

    struct BenchmarkError: Error, CustomStringConvertible {
        var description: String
    }

    /// Times each plug from the device's appearance to the reply to a command sent at once.
    ///
    /// For each plug the clock starts, the device is plugged (umockdev announces `add`), a command is sent at once (it
    /// waits in the pty until the daemon opens the node), and the clock stops when its reply arrives.
    func measureAddToFirstAck(count: Int) throws -> [Duration] {
        var latencies: [Duration] = []
        latencies.reserveCapacity(count)
        for index in 0..<count {
            let start = ContinuousClock.now
            let wearable = MockWearable(tty: try plugWearable(index: index))
            wearable.send(
                #"{"command_type":"start_workout","location":"Bench","date":"2020-03-16 19:45:13 +0000","intensityLevel":5,"id":1}"#
            )
            guard let reply = wearable.readLineBlocking(timeout: .seconds(5)) else {
                throw BenchmarkError(description: "plug \(index): no reply within 5 s")
            }
            latencies.append(ContinuousClock.now - start)
            guard reply.contains(#""status":"ok""#) else {
                throw BenchmarkError(description: "plug \(index): \(reply)")
            }
            testbed.unplug(wearable.tty)
        }
        return latencies
    }

    /// Plugs `count` wearables and returns them once each has answered a command.
    func plugServed(count: Int, firstIndex: Int) throws -> [MockWearable] {
        let wearables = try (0..<count).map { MockWearable(tty: try plugWearable(index: firstIndex + $0)) }
        for wearable in wearables {
            wearable.send(#"{"command_type":"end_workout","id":"warm-up"}"#)
            guard wearable.readLineBlocking(timeout: .seconds(10)) != nil else {
                throw BenchmarkError(description: "\(wearable.tty.devnode) was not served")
            }
        }
        return wearables
    }

    private func plugWearable(index: Int) throws -> MockTTY {
        let serial = String(format: "BENCH-%05d", index)
        return try testbed.plugTTY(
            name: "ttyACM\(index)",
            usbPort: "1-\(index + 1)",
            properties: [
                "ID_SERIAL": "Workoutd_Wearable_\(serial)", "ID_SERIAL_SHORT": serial,
                "ID_VENDOR_ID": "1209", "ID_MODEL_ID": "a7e1", "ID_USB_DRIVER": "cdc_acm", "WORKOUTD_DEVICE": "1",
            ]
        )
    }
}
