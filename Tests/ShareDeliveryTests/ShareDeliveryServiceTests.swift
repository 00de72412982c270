import Foundation
import Logging
import NIOHTTP1
import SerialTransport
import ServiceSupport
import Synchronization
import Testing
import WorkoutProtocol
import WorkoutdTesting

@testable import ShareDelivery
@testable import WorkoutEngine
@testable import WorkoutStorage

@Suite struct ShareDeliveryServiceTests {
    /// The default configuration with one change.
    static func configuration(_ change: (inout ShareDeliveryConfiguration) -> Void) -> ShareDeliveryConfiguration {
        var configuration = ShareDeliveryConfiguration()
        change(&configuration)
        return configuration
    }

    /// Start, end, share on one device: one pending share in the store.
    static func queueShare(_ engine: WorkoutEngine, service: ShareService = .twitter) async throws -> Int64 {
        let replies = await engine.session(for: "wearable-1").handle([
            DecodedLines.start(1), DecodedLines.end(2), DecodedLines.share(3, service),
        ])
        try #require(replies.allSatisfy { $0.isSuccess })
        guard case .ok(.workoutShared(_, _, let shareID)) = replies[2].outcome else { throw TestFailure() }
        return shareID
    }

    @Test func aQueuedShareWakesTheIdleWorkerThatHasNoTimerArmed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        let sinks = ShareSinkConfiguration().makeSinks(stateDirectory: directory.path)
        let service = ShareDeliveryService(store: store, sinks: sinks, events: engine.events)
        let delivered = Mutex<[Int64]>([])
        engine.events.addObserver { event in
            if case .shareDelivered(let share) = event { delivered.withLock { $0.append(share.id) } }
        }
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await Task.sleep(for: .milliseconds(100))  // let the worker reach its wait

        // Nothing is pending, so the worker has no timer armed: a delivery at all proves the queueing woke it; the
        // wait below is only a bound for a broken build, generous for a loaded machine.
        let shareID = try await Self.queueShare(engine)
        let file = directory.path + "/outbox/twitter/share-\(shareID).json"
        #expect(try await eventually(timeout: .seconds(120)) { FileManager.default.fileExists(atPath: file) })
        #expect(try await eventually { try await store.shares(limit: nil).first?.status == .delivered })
        // The event follows the stored status: wait for it rather than read it at once.
        #expect(try await eventually { delivered.withLock { $0 } == [shareID] }, "\(delivered.withLock { $0 })")
        let share = try #require(try await store.shares(limit: nil).first)
        #expect(share.attempts == 1 && share.deliveredAt != nil && share.lastError == nil)
    }

    /// Device traffic as the delivery worker sees it, a batch received every 20 ms, until stopped. From a thread
    /// of its own: on the cooperative pool the suites running beside this one could hold it up long enough to
    /// look like a pause.
    final class BusyDevices: Sendable {
        private let stopped = Atomic<Bool>(false)
        private let finished = DispatchSemaphore(value: 0)

        init(_ events: EngineEvents) {
            Thread.detachNewThread { [self] in
                let batch = ReceivedBatch(device: "wearable-busy", origin: .device, lines: [DecodedLines.end(1_000)])
                while isRunning {
                    events.emit(.batchReceived(batch))
                    usleep(20_000)
                }
                finished.signal()
            }
        }

        var isRunning: Bool { !stopped.load(ordering: .relaxed) }

        func stop() {
            guard !stopped.exchange(true, ordering: .relaxed) else { return }
            finished.wait()
        }
    }

    /// A running worker, devices sending a batch every 20 ms, and one share queued.
    ///
    /// The worker's pass needs 500 ms without a batch (`limit` at most); `check` gets the share's spool file, the store
    /// and the traffic.
    static func withBusyDevices(
        limit: Duration,
        _ check: (_ file: String, SQLiteWorkoutStore, BusyDevices) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        let service = ShareDeliveryService(
            store: store,
            sinks: ShareSinkConfiguration().makeSinks(stateDirectory: directory.path),
            events: engine.events,
            configuration: Self.configuration {
                $0.gatherDelay = .milliseconds(500)
                $0.maximumDeferral = limit
            }
        )
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await Task.sleep(for: .milliseconds(100))  // let the worker reach its wait

        let traffic = BusyDevices(engine.events)
        defer { traffic.stop() }
        let shareID = try await Self.queueShare(engine)
        try await check(directory.path + "/outbox/twitter/share-\(shareID).json", store, traffic)
    }

    @Test func aPassWaitsForTheDevicesToPause() async throws {
        // The limit is out of reach: only a pause lets the pass start.
        try await Self.withBusyDevices(limit: .seconds(600)) { file, store, traffic async throws in
            try await Task.sleep(for: .seconds(2))
            #expect(!FileManager.default.fileExists(atPath: file), "delivered while the devices were busy")
            #expect(try await store.shares(limit: nil).first?.status == .pending)

            traffic.stop()
            #expect(try await eventually(timeout: .seconds(120)) { FileManager.default.fileExists(atPath: file) })
            #expect(try await eventually { try await store.shares(limit: nil).first?.status == .delivered })
        }
    }

    @Test func devicesThatNeverPauseHoldAShareBackOnlyUpToTheLimit() async throws {
        try await Self.withBusyDevices(limit: .milliseconds(300)) { file, store, traffic async throws in
            // Delivered with the devices still busy: the limit, not a pause, let the pass start.
            #expect(try await eventually(timeout: .seconds(120)) { FileManager.default.fileExists(atPath: file) })
            #expect(traffic.isRunning)
            #expect(try await eventually { try await store.shares(limit: nil).first?.status == .delivered })
        }
    }

    @Test func aBacklogLargerThanAPassIsDeliveredWholeAndInOrder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        // 25 shares queued before the worker starts; it takes 8 per pass and rests between passes.
        let session = engine.session(for: "wearable-1")
        for n in Int64(0)..<25 {
            let replies = await session.handle([
                DecodedLines.start(3 * n + 1), DecodedLines.end(3 * n + 2), DecodedLines.share(3 * n + 3),
            ])
            try #require(replies.allSatisfy { $0.isSuccess && !$0.replayed })
        }
        let sinks = ShareSinkConfiguration().makeSinks(stateDirectory: directory.path)
        let service = ShareDeliveryService(
            store: store,
            sinks: sinks,
            events: engine.events,
            configuration: Self.configuration { $0.batchSize = 8 }
        )
        let delivered = Mutex<[Int64]>([])
        engine.events.addObserver { event in
            if case .shareDelivered(let share) = event { delivered.withLock { $0.append(share.id) } }
        }
        let running = Task { try await service.run() }
        defer { running.cancel() }

        // Four passes with rests in proportion to each pass: on a loaded machine that takes far longer than
        // the passes' own work.
        #expect(try await eventually(timeout: .seconds(120)) { delivered.withLock { $0.count } == 25 })
        let shares = try await store.shares(limit: nil)
        #expect(shares.count == 25 && shares.allSatisfy { $0.status == .delivered && $0.attempts == 1 })
        #expect(delivered.withLock { $0 } == shares.map(\.id).sorted())
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/outbox/twitter").count == 25)
    }

    @Test func webhookFailuresBackOffExponentiallyAndKeepTheError() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try await TestHTTPServer(statuses: [.internalServerError, .serviceUnavailable])
        let clock = ManualClock()
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store, clock: { clock() })
        let shareID = try await Self.queueShare(engine, service: .facebook)
        let configuration = ShareSinkConfiguration(sinks: [
            .facebook: .init(kind: .webhook(url: server.url), timeout: .seconds(5))
        ])
        let service = ShareDeliveryService(
            store: store,
            sinks: configuration.makeSinks(stateDirectory: directory.path),
            events: engine.events,
            configuration: Self.configuration {
                $0.backoff = RetryBackoff(initial: .seconds(10), maximum: .seconds(15))
            },
            clock: { clock() }
        )

        #expect(await service.deliverDueShares() == 1)
        var share = try #require(try await store.shares(limit: nil).first)
        #expect(share.status == .pending && share.attempts == 1)
        #expect(share.lastError?.contains("500") == true)
        #expect(share.nextAttemptAt == clock().addingTimeInterval(10))

        #expect(await service.deliverDueShares() == 0, "not due before its backoff has passed")
        clock.advance(by: 10)
        #expect(await service.deliverDueShares() == 1)
        share = try #require(try await store.shares(limit: nil).first)
        #expect(share.attempts == 2 && share.lastError?.contains("503") == true)
        #expect(share.nextAttemptAt == clock().addingTimeInterval(15), "doubled to 20 s, capped at 15 s")

        clock.advance(by: 15)
        #expect(await service.deliverDueShares() == 1)
        share = try #require(try await store.shares(limit: nil).first)
        #expect(share.id == shareID && share.status == .delivered && share.attempts == 3 && share.lastError == nil)
        #expect(await service.deliverDueShares() == 0)
        try await server.stop()
        #expect(server.requests.count == 3)
        #expect(Set(server.requests.map(\.body)).count == 1, "every attempt posts the same document")
    }

    @Test func aFailedShareIsRetriedWhenItsBackoffIsDueWithoutAnotherRing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try await TestHTTPServer(statuses: [.serviceUnavailable])
        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let engine = try await WorkoutEngine(store: store)
        let configuration = ShareSinkConfiguration(sinks: [
            .facebook: .init(kind: .webhook(url: server.url), timeout: .seconds(5))
        ])
        let service = ShareDeliveryService(
            store: store,
            sinks: configuration.makeSinks(stateDirectory: directory.path),
            events: engine.events,
            configuration: Self.configuration { $0.backoff = RetryBackoff(initial: .milliseconds(300)) }
        )
        let running = Task { try await service.run() }
        defer { running.cancel() }

        // One ring (the share queued); the second attempt comes from the timer the worker armed for the share's
        // nextAttemptAt, as nothing else rings or polls.
        let shareID = try await Self.queueShare(engine, service: .facebook)
        #expect(
            try await eventually(timeout: .seconds(120)) {
                try await store.shares(limit: nil).first?.status == .delivered
            }
        )
        let share = try #require(try await store.shares(limit: nil).first)
        #expect(share.id == shareID && share.attempts == 2 && share.lastError == nil)
        #expect(try await store.nextShareAttempt() == nil, "nothing pending: no timer left to arm")
        running.cancel()
        _ = try? await running.value
        try await server.stop()
        #expect(server.requests.count == 2)
    }

    @Test func aDeliveryInterruptedByACrashResumesAfterRestartAndIsMarkedOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let shareID: Int64
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            let engine = try await WorkoutEngine(store: store)
            shareID = try await Self.queueShare(engine)
            let hanging = HangingSink()
            let service = ShareDeliveryService(store: store, sinks: [.twitter: hanging], events: engine.events)
            let running = Task { try await service.run() }
            #expect(try await eventually { hanging.calls.load(ordering: .relaxed) == 1 })
            // The daemon dies while the share is in flight: nothing about the attempt was recorded.
            running.cancel()
            _ = try? await running.value
            try store.close()
        }

        let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
        let pending = try #require(try await store.dueShares(now: Date(), limit: 10).first)
        #expect(pending.id == shareID && pending.attempts == 0)
        let service = ShareDeliveryService(
            store: store,
            sinks: ShareSinkConfiguration().makeSinks(stateDirectory: directory.path),
            events: EngineEvents()
        )
        #expect(await service.deliverDueShares() == 1)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/outbox/twitter/share-\(shareID).json"))
        let delivered = try #require(try await store.shares(limit: nil).first)
        #expect(delivered.status == .delivered && delivered.attempts == 1)

        // A late second report of the same delivery changes nothing.
        try await store.recordDelivery(shareID: shareID, result: .delivered(at: Date().addingTimeInterval(60)))
        #expect(try await store.shares(limit: nil).first == delivered)
        #expect(await service.deliverDueShares() == 0)
    }
}

/// A sink that never finishes, like a delivery cut short by a crash.
final class HangingSink: ShareSink {
    let calls = Atomic<Int>(0)
    func deliver(_ payload: SharePayload) async throws {
        calls.add(1, ordering: .relaxed)
        try await Task.sleep(for: .seconds(3600))
    }
}

struct TestFailure: Error {}
