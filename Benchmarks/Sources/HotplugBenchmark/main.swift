// Hotplug benchmark for `make bench` (run under umockdev-wrapper, release build):
//  1. latency from the udev `add` event to the first command acknowledged on that device, over
//     repeated plugs of fresh devices (p50/p99; floors in Benchmarks/Thresholds/hotplug.json);
//  2. aggregate throughput with 16 devices busy at once against one device alone, same run
//     (the ratio's floor is there too).
// Everything is real except the hardware: libudev reads umockdev's sysfs, uevents arrive on the
// monitor socket, nodes are ptys, and the daemon's DiscoveryService/DeviceManager/WorkoutEngine serve them.
import BenchmarkSupport
import DeviceDiscovery
import Foundation
import Logging
import NIOPosix
import SerialTransport
import WorkoutEngine
import WorkoutdTesting

let options = BenchmarkOptions.parse(CommandLine.arguments.dropFirst())
guard MockUdevTestbed.isPreloaded else {
    FileHandle.standardError.write(
        Data("HotplugBenchmark must run under umockdev-wrapper (LD_PRELOAD=libumockdev-preload.so.0)\n".utf8)
    )
    exit(2)
}

var logger = Logger(label: "workoutd.hotplug-benchmark")
logger.logLevel = .error
let testbed = MockUdevTestbed()
let engine = try await WorkoutEngine(store: InMemoryWorkoutStore())
let group = MultiThreadedEventLoopGroup(numberOfThreads: ProcessInfo.processInfo.activeProcessorCount)
let manager = DeviceManager(group: group, engine: engine, options: PipelineOptions(), logger: logger)
let discovery = DiscoveryService(
    manager: manager,
    matcher: try DeviceMatcher(parsing: DeviceMatcher.defaultRules),
    logger: logger
)
let discoveryTask = Task { try await discovery.run() }
try await discovery.waitUntilReady()

let plugs = PlugSession(testbed: testbed)
let latencies = try await onDedicatedThread { try plugs.measureAddToFirstAck(count: options.plugs) }

let busy = try await onDedicatedThread { try plugs.plugServed(count: options.devices, firstIndex: options.plugs) }
let single = try await onDedicatedThread { try Throughput.measure(busy.prefix(1), commandsPerDevice: options.commands) }
let aggregate = try await onDedicatedThread { try Throughput.measure(busy, commandsPerDevice: options.commands) }

discoveryTask.cancel()
_ = await discoveryTask.result
await manager.drainAll(timeout: .seconds(2))
try await group.shutdownGracefully()

let report = BenchmarkReport(
    thresholds: try Thresholds.load(part: "hotplug"),
    plugs: options.plugs,
    latencies: latencies,
    devices: options.devices,
    commandsPerDevice: options.commands,
    singleDevicePerSecond: single,
    aggregatePerSecond: aggregate
)
print(report.markdown)
try Thresholds.writeMetrics(report.metrics)
if options.enforceFloors && !report.meetsFloors {
    FileHandle.standardError.write(Data("HotplugBenchmark: a floor was missed\n".utf8))
    exit(1)
}

/// Runs blocking pty I/O on a thread of its own, off Swift's cooperative pool that serves the devices.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { done in
        let thread = Thread { done.resume(with: Result { try body() }) }
        thread.start()
    }
}
