import Foundation
import Logging
import Replication
import Synchronization
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage
import WorkoutdTesting

/// One gym's hub without its ttys, driven by calls.
///
/// The real SQLite store, engine and replication shipper.
///
/// Everything from the command on is the daemon's own code: the session commits the workout durably, the store
/// records it in the replication outbox and rings the doorbell, and the shipper sends it to the central database
/// (through the pooler) with its identity, its heartbeat and its reconnects.
final class SimulatedHub: Sendable {
    let hubID: String
    let store: SQLiteWorkoutStore
    let engine: WorkoutEngine
    let shipper: ReplicationShipper
    private let commands = Atomic<Int64>(0)

    init(hubID: String, directory: String, url: String, heartbeatInterval: Int, logger: Logger) async throws {
        self.hubID = hubID
        let doorbell = ReplicationDoorbell()
        let store = try SQLiteWorkoutStore(
            stateDirectory: directory,
            replicationDoorbell: doorbell,
            softwareVersion: "fleet-benchmark"
        )
        self.store = store
        engine = try await WorkoutEngine(store: store, clock: { Date() })
        var configuration = try ReplicationConfiguration(url: url, passwordFile: nil, hubID: hubID)
        configuration.heartbeatInterval = .seconds(heartbeatInterval)
        configuration.hubName = "Gym \(hubID)"
        shipper = try ReplicationShipper(
            configuration: configuration,
            log: store,
            doorbell: doorbell,
            softwareVersion: "fleet-benchmark",
            logger: logger,
            activity: {
                // Each workout of the load runs on a wearable of its own, so the two counts are one.
                let active = (try? await store.activeSessionCount()) ?? 0
                return HubActivity(wearablesConnected: active, activeWorkouts: active)
            }
        )
    }

    /// A workout on wearable `device`: started, and ended `length` later. Returns its id and when the start was
    /// acknowledged (durable on the hub), or nil when the hub refused it.
    func startWorkout(device: Int) async -> (workoutID: Int64, acknowledged: ContinuousClock.Instant)? {
        let id = commands.add(1, ordering: .relaxed).newValue
        let replies = await engine.session(for: DeviceIdentity("wearable-\(device)")).handle([
            DecodedLines.start(id, location: "Studio \(device % 4)", intensity: Int(id % 10) + 1)
        ])
        let acknowledged = ContinuousClock.now
        guard case .ok(.workoutStarted(let workoutID)) = replies.first?.outcome else { return nil }
        return (workoutID, acknowledged)
    }

    func endWorkout(device: Int) async -> Bool {
        let id = commands.add(1, ordering: .relaxed).newValue
        let replies = await engine.session(for: DeviceIdentity("wearable-\(device)")).handle([DecodedLines.end(id)])
        return replies.first?.isSuccess == true
    }

    /// Every workout this hub stored, by id.
    func storedWorkoutIDs() async throws -> Set<Int64> {
        Set(try await store.workouts(device: nil, limit: nil).map(\.id))
    }
}
