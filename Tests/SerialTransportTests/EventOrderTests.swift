import Foundation
import Logging
import NIOPosix
import SerialTransport
import Synchronization
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage
import WorkoutdTesting

/// For one device, events appear in the order things happened (docs/control-protocol.md).
///
/// That is "a batch's `command_received` events, then what the commands caused, then its `reply_sent` events" — on the
/// path that answers a batch at once (a session on its device's loop over an in-memory store) and on the one that waits
/// for the store to commit (SQLite), through a real pty and the daemon's ``DeviceManager``.
@Suite struct EventOrderTests {
    enum Storage: String, CaseIterable, Sendable {
        case memory, sqlite
    }

    /// The engine's events as short words: `received 1`, `workout_started`, `answered 1`, ...
    final class Trace: Sendable {
        private let entries = Mutex<[String]>([])
        var all: [String] { entries.withLock { $0 } }

        func record(_ event: EngineEvent) {
            func ids(_ lines: [DecodedLine]) -> String {
                lines.map { line in line.id.map { "\($0)" } ?? "-" }.joined(separator: ",")
            }
            let entry: String
            switch event {
            case .batchReceived(let batch): entry = "received \(ids(batch.lines))"
            case .batchAnswered(let batch):
                entry = "answered \(ids(batch.lines)) \(batch.replies.map { $0.isSuccess ? "ok" : "error" })"
            case .workoutStarted: entry = "workout_started"
            case .workoutEnded: entry = "workout_ended"
            case .shareQueued: entry = "share_queued"
            case .shareDelivered, .shareFailed: entry = "share delivery"
            case .storageFailed(_, let reason): entry = "storage_failed \(reason)"
            }
            entries.withLock { $0.append(entry) }
        }
    }

    @Test("a batch's received event, then what it caused, then its answer", arguments: Storage.allCases)
    func documentedOrder(storage: Storage) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "event-order-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store: any WorkoutStore =
            switch storage {
            case .memory: InMemoryWorkoutStore()
            case .sqlite: try SQLiteWorkoutStore(stateDirectory: directory)
            }
        let trace = Trace()
        let events = EngineEvents()
        events.addObserver { trace.record($0) }
        // Placed as the daemon places sessions: on their device's loop, where an in-memory batch runs at once.
        let placement = SessionPlacement(group: MultiThreadedEventLoopGroup.singleton)
        let engine = try await WorkoutEngine(store: store, events: events, sessionExecutor: placement.sessionExecutor)
        let manager = DeviceManager(
            group: MultiThreadedEventLoopGroup.singleton,
            placement: placement,
            engine: engine,
            options: PipelineOptions(),
            logger: Logger(label: "test")
        )
        let wearable = try SimulatedWearable()
        await manager.attach(DeviceSpec(path: wearable.devicePath, identity: "order"))
        while await manager.devices().first?.snapshot.connected != true {
            try await Task.sleep(for: .milliseconds(10))
        }

        // One line per read, each answered before the next is written: one batch each.
        for line in [
            #"{"command_type":"start_workout","location":"Gym","date":"2020-03-16T19:45:13Z","intensityLevel":5,"id":1}"#,
            #"{"command_type":"end_workout","id":2}"#,
            #"{"command_type":"share_workout","service":"twitter","id":3}"#,
            #"{"command_type":"end_workout","id":4}"#,
            "not json",
        ] {
            _ = try wearable.request(line)
        }
        await manager.drainAll(timeout: .seconds(5))

        // One batch's events all come before the next batch's (on the in-memory path they follow its write,
        // before the next read is handled); draining ends after the last of them.
        #expect(
            trace.all == [
                "received 1", "workout_started", #"answered 1 ["ok"]"#,
                "received 2", "workout_ended", #"answered 2 ["ok"]"#,
                "received 3", "share_queued", #"answered 3 ["ok"]"#,
                "received 4", #"answered 4 ["error"]"#,
                "received -", #"answered - ["error"]"#,
            ]
        )
        #expect(await manager.devices().isEmpty, "drained")
    }
}
