import Foundation
import Logging
import NIOCore
import NIOPosix
import SerialTransport
import ServiceLifecycle
import WorkoutEngine

/// The composition root: builds the engine, storage and transports from the configuration and runs
/// them as one service group that shuts down gracefully on SIGTERM/SIGINT.
// COMPOSITION-ROOT-READY (marker for parallel work; removed before release)
enum Daemon {
    static func run(_ config: DaemonConfiguration, logger: Logger) async throws {
        let store: any WorkoutStore = InMemoryWorkoutStore()
        let engine = try await WorkoutEngine(store: store)
        let manager = DeviceManager(
            group: MultiThreadedEventLoopGroup.singleton, engine: engine,
            options: config.pipelineOptions, logger: logger)
        let staticDevices = config.devices.map { path in
            DeviceSpec(path: path, identity: DeviceIdentity(path), baud: config.baud, policy: config.reconnect)
        }
        let serial = SerialDeviceService(manager: manager, staticDevices: staticDevices, drainTimeout: config.drainTimeout)

        let services: [any Service] = [serial]
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        logger.info("workoutd started", metadata: [
            "devices": "\(config.devices.joined(separator: ","))",
            "state_dir": "\(config.stateDirectory)",
        ])
        try await group.run()
        logger.info("workoutd stopped")
    }
}
