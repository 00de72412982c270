import Logging
import NIOCore
import SerialTransport
import SystemdSupport
import WorkoutEngine

/// The daemon's side of `Type=notify`: the watchdog and the READY/STATUS/STOPPING reporter.
/// Both do nothing visible when the daemon was started by hand.
struct SystemdServices {
    let notifier: SystemdNotifier
    let logger: Logger
    /// Rung when the status line may have changed; see ``observe(_:)`` and ``noteStatusChange()``.
    private let statusChanges = SystemdStatusService.makeChangeStream()

    init(logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) {
        self.logger = logger
        self.notifier = notifier
    }

    /// Rings the status line on what it describes.
    ///
    /// A device that came or went, a workout that started or ended, storage that failed. Device activity is connections
    /// coming and going: each one rings.
    var deviceObserver: DeviceActivity.Observer {
        { [continuation = statusChanges.continuation] _ in continuation.yield() }
    }

    /// Started by hand (no `NOTIFY_SOCKET`), there is no status line to keep current.
    ///
    /// Nothing is observed then.
    func observe(_ events: EngineEvents) {
        guard notifier.isConnected else { return }
        events.addBatchObserver { [continuation = statusChanges.continuation] emitted in
            if emitted.workoutsStarted + emitted.workoutsEnded + emitted.storageFailures > 0 { continuation.yield() }
        }
    }

    /// For changes other than devices and workouts (a failed background integrity check).
    func noteStatusChange() {
        statusChanges.continuation.yield()
    }

    /// Goes first in the service group, so it is shut down last and keeps pinging while others drain.
    func watchdog(eventLoopGroup: any EventLoopGroup) -> WatchdogService {
        WatchdogService(notifier: notifier, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// Goes last in the service group, so `STOPPING=1` is the first thing shutdown does.
    /// - Parameter untilReady: returns once devices can be served (discovery armed, first scan done).
    /// - Parameter storageProblem: what the background integrity check found wrong, if anything.
    func status(
        manager: DeviceManager,
        records: any RecordQueries,
        untilReady: @escaping @Sendable () async throws -> Void,
        storageProblem: @escaping @Sendable () -> String? = { nil }
    ) -> SystemdStatusService {
        SystemdStatusService(notifier: notifier, changes: statusChanges.stream, logger: logger, untilReady: untilReady)
        {
            await Self.describe(manager: manager, records: records, storageProblem: storageProblem())
        }
    }

    /// "2 devices, 1 workout active": what `systemctl status workoutd` shows.
    static func describe(
        manager: DeviceManager,
        records: any RecordQueries,
        storageProblem: String? = nil
    ) async -> String {
        let connected = await manager.devices().filter { $0.snapshot.connected }.count
        let devices = connected == 1 ? "1 device" : "\(connected) devices"
        let problem = storageProblem.map { ", STORAGE: \($0) (see the log)" } ?? ""
        guard let active = try? await records.activeSessionCount() else {
            return "\(devices), storage unavailable\(problem)"
        }
        switch active {
        case 0: return "\(devices), no workout active\(problem)"
        case 1: return "\(devices), 1 workout active\(problem)"
        default: return "\(devices), \(active) workouts active\(problem)"
        }
    }
}
