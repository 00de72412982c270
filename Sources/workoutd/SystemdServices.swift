import Logging
import NIOCore
import SerialTransport
import SystemdSupport
import WorkoutEngine

/// The daemon's side of `Type=notify`: the watchdog and the READY/STATUS/STOPPING reporter.
/// Both do nothing visible when the daemon was started by hand.
struct SystemdServices {
    let notifier = SystemdNotifier()
    let logger: Logger

    /// Goes first in the service group, so it is shut down last and keeps pinging while others drain.
    func watchdog(eventLoopGroup: any EventLoopGroup) -> WatchdogService {
        WatchdogService(notifier: notifier, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// Goes last in the service group, so `STOPPING=1` is the first thing shutdown does.
    /// - Parameter untilReady: returns once devices can be served (discovery armed, first scan done).
    func status(
        manager: DeviceManager, engine: WorkoutEngine, untilReady: @escaping @Sendable () async throws -> Void
    ) -> SystemdStatusService {
        SystemdStatusService(notifier: notifier, logger: logger, untilReady: untilReady) {
            await Self.describe(manager: manager, engine: engine)
        }
    }

    /// "2 devices, 1 workout active": what `systemctl status workoutd` shows.
    static func describe(manager: DeviceManager, engine: WorkoutEngine) async -> String {
        let connected = await manager.devices().filter { $0.snapshot.connected }.count
        let devices = connected == 1 ? "1 device" : "\(connected) devices"
        guard let active = try? await engine.store.activeSessionCount() else {
            return "\(devices), storage unavailable"
        }
        switch active {
        case 0: return "\(devices), no workout active"
        case 1: return "\(devices), 1 workout active"
        default: return "\(devices), \(active) workouts active"
        }
    }
}
