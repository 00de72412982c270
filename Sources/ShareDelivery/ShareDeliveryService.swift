import Foundation
import Logging
import ServiceLifecycle
import ServiceSupport
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// The delivery worker: sends due shares through their service's sink and records each attempt.
///
/// Wakes as soon as the engine queues a share, and otherwise only when the earliest pending retry is due
/// (a timer armed for that time); with nothing pending it sleeps until a share is queued, reading nothing.
/// Woken, it waits for the devices to pause (``ShareDeliveryConfiguration/gatherDelay`` without a batch, at
/// most ``ShareDeliveryConfiguration/maximumDeferral``): devices come first. Delivery state lives in the
/// store, so after a crash the shares still pending are sent again (at least once); the store marks a share
/// delivered only once.
public struct ShareDeliveryService: Service {
    private let store: any ShareQueueStore
    /// Swapped by a configuration reload; each delivery uses the sinks in force when it starts.
    private let sinks: SinkTable
    private let events: EngineEvents
    private let backoff: RetryBackoff
    private let batchSize: Int
    /// How long the devices must be quiet before a pass, and how long a pass waits for that at most.
    private let gatherDelay: Duration
    private let maximumDeferral: Duration
    /// The most of its time the worker spends in passes while a backlog lasts (it rests between them).
    private let dutyCycle: Double
    private let clock: @Sendable () -> Date
    /// One filter per service: a sink that stays down is logged once.
    ///
    /// A count follows when it changes or recovers.
    private let failures = FailureFilters()
    private let logger: Logger

    /// - Parameter sinks: built from `configuration.sinks` by the caller (tests pass their own).
    public init(
        store: any ShareQueueStore,
        sinks: [ShareService: any ShareSink],
        events: EngineEvents,
        configuration: ShareDeliveryConfiguration = ShareDeliveryConfiguration(),
        clock: @escaping @Sendable () -> Date = Date.init,
        logger: Logger = Logger(label: "workoutd.shares")
    ) {
        self.store = store
        self.sinks = SinkTable(sinks)
        self.events = events
        self.backoff = configuration.backoff
        self.batchSize = max(1, configuration.batchSize)
        self.gatherDelay = configuration.gatherDelay
        self.maximumDeferral = configuration.maximumDeferral
        self.dutyCycle = min(1, max(0.01, configuration.dutyCycle))
        self.clock = clock
        self.logger = logger
    }

    /// New sinks (a reload): deliveries that start from now on use them.
    public func replaceSinks(_ sinks: [ShareService: any ShareSink]) {
        self.sinks.replace(sinks)
    }

    public func run() async throws {
        let doorbell = Doorbell()
        let traffic = DeviceTraffic()
        let token = events.addBatchObserver { emitted in
            traffic.observe(emitted)
            if emitted.sharesQueued > 0 { doorbell.ring() }
        }
        defer { events.removeObserver(token) }

        // Every pass on the background thread, below the devices' priority (see BackgroundIO).
        await withTaskExecutorPreference(BackgroundIO.executor) {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    let started = ContinuousClock.now
                    let batchesBefore = traffic.batchesSeen
                    let sent = await deliverDueShares()
                    if sent >= batchSize {
                        // More may be due right away. Even at the lowest priority, a pass's file system
                        // work runs in the kernel, where a device's reply cannot preempt it: under a
                        // backlog, rest in proportion, so devices keep most of the machine, and when
                        // they were served meanwhile, let them pause before the next pass.
                        let busy = ContinuousClock.now - started
                        try? await Task.sleep(for: busy * ((1 - dutyCycle) / dutyCycle))
                        if traffic.batchesSeen != batchesBefore {
                            await traffic.pause(quiet: gatherDelay, atMost: maximumDeferral)
                        }
                    } else if await doorbell.wait(timeout: await untilNextRetry()) {
                        // Shares queued close together go out in one pass (one fsync of a spool
                        // directory for many), once the devices pause: delivery I/O does not
                        // interleave with their commands.
                        await traffic.pause(quiet: gatherDelay, atMost: maximumDeferral)
                    }
                }
            }
        }
    }

    /// How long until the earliest pending share is due again; nil when none is pending (wait for a ring).
    private func untilNextRetry() async -> Duration? {
        do {
            guard let next = try await store.nextShareAttempt() else { return nil }
            return .seconds(max(0, next.timeIntervalSince(clock())))
        } catch {
            if Task.isCancelled { return nil }
            // Storage unreadable right now: look again after the first backoff step rather than never.
            logger.warning("cannot read when pending shares are due", metadata: ["error": "\(error)"])
            return backoff.initial
        }
    }

    /// One pass: delivers what is due now; returns how many shares it tried.
    ///
    /// The pass's outcomes are recorded together, in one store transaction: a crash before that record
    /// means those shares are delivered again after restart (at least once), never lost.
    @discardableResult
    public func deliverDueShares() async -> Int {
        let due: [ShareRecord]
        do {
            due = try await store.dueShares(now: clock(), limit: batchSize)
        } catch {
            logger.warning("cannot read pending shares", metadata: ["error": "\(error)"])
            return 0
        }
        guard !due.isEmpty else { return 0 }
        let workouts: [Int64: WorkoutRecord]
        do {
            workouts = try await store.workouts(ids: due.map(\.workoutID))
        } catch {
            logger.warning("cannot read the workouts of pending shares", metadata: ["error": "\(error)"])
            return 0
        }
        var attempts: [(share: ShareRecord, result: DeliveryResult)] = []
        // One call per sink for the pass, in id order within it, so a sink can share work between shares.
        for service in ShareService.allCases {
            let shares = due.filter { $0.service == service }
            guard !shares.isEmpty, !Task.isCancelled else { continue }
            attempts += await attempt(shares, through: sinks.sink(for: service), workouts: workouts)
        }
        attempts.sort { $0.share.id < $1.share.id }
        do {
            try await store.recordDeliveries(attempts.map { ($0.share.id, $0.result) })
        } catch {
            logger.warning(
                "cannot record delivery attempts; they will be repeated",
                metadata: [
                    "shares": "\(attempts.map { String($0.share.id) }.joined(separator: ","))", "error": "\(error)",
                ]
            )
            return due.count
        }
        for (share, result) in attempts { report(share, result) }
        return due.count
    }

    private func metadata(for share: ShareRecord) -> Logger.Metadata {
        [
            "share_id": "\(share.id)", "service": "\(share.service.rawValue)", "device": "\(share.device)",
            "attempt": "\(share.attempts + 1)",
        ]
    }

    /// Sends shares of one service.
    ///
    /// A share shutdown interrupted is left out (pending and uncounted, retried after restart).
    private func attempt(
        _ shares: [ShareRecord],
        through sink: (any ShareSink)?,
        workouts: [Int64: WorkoutRecord]
    ) async -> [(share: ShareRecord, result: DeliveryResult)] {
        var outcomes: [(share: ShareRecord, outcome: Result<Void, any Error>)] = []
        var payloads: [(share: ShareRecord, payload: SharePayload)] = []
        for share in shares {
            if sink == nil {
                outcomes.append(
                    (share, .failure(ShareDeliveryError("no sink is configured for \(share.service.rawValue)")))
                )
            } else if let workout = workouts[share.workoutID] {
                payloads.append((share, SharePayload(share: share, workout: workout)))
            } else {
                outcomes.append((share, .failure(ShareDeliveryError("workout \(share.workoutID) is not in the store"))))
            }
        }
        if let sink, !payloads.isEmpty {
            let results = await sink.deliver(payloads.map(\.payload))
            outcomes += zip(payloads, results).map { ($0.share, $1) }
        }
        // A delivery cut short by shutdown is not an attempt: left pending and uncounted.
        if Task.isCancelled { outcomes.removeAll { if case .failure = $0.outcome { true } else { false } } }
        return outcomes.map { share, outcome in
            switch outcome {
            case .success:
                return (share, .delivered(at: clock()))
            case .failure(let error):
                let retryAt = clock().addingTimeInterval(backoff.delay(afterAttempts: share.attempts + 1).inSeconds)
                return (share, .failed(error: String(describing: error), retryAt: retryAt))
            }
        }
    }

    /// Logs a recorded attempt and tells the engine's observers.
    private func report(_ share: ShareRecord, _ result: DeliveryResult) {
        let metadata = metadata(for: share)
        var updated = share
        updated.attempts += 1
        switch result {
        case .delivered(let at):
            updated.status = .delivered
            updated.deliveredAt = at
            // Routine: only at debug, so a busy hub's journal does not fill with deliveries.
            logger.debug("share delivered", metadata: metadata)
            if case .logRecovery(let heldBack) = failures.succeeded(share.service) {
                logger.notice(
                    "share delivery recovered",
                    metadata: [
                        "service": "\(share.service.rawValue)", "last_error": "\(heldBack.description)",
                        "repeated": "\(heldBack.count) times",
                    ]
                )
            }
            events.emit(.shareDelivered(updated))
        case .failed(let error, let retryAt):
            updated.lastError = error
            updated.nextAttemptAt = retryAt
            let failure = metadata.merging(["error": "\(error)", "retry_at": "\(retryAt)"]) { $1 }
            switch failures.failed(share.service, error) {
            case .logFailure(let replacing):
                if let replacing {
                    logger.notice(
                        "share delivery failure repeated",
                        metadata: [
                            "service": "\(share.service.rawValue)", "error": "\(replacing.description)",
                            "repeated": "\(replacing.count) times",
                        ]
                    )
                }
                logger.warning(
                    "share delivery failed; identical failures are counted until it changes or recovers",
                    metadata: failure
                )
            case .holdBack:
                logger.debug("share delivery failed", metadata: failure)
            case .logRecovery, .routine:
                break
            }
            events.emit(.shareFailed(updated, error: error))
        }
    }
}

/// The failure filters by service, shared by the copies of the (value-type) service.
private final class FailureFilters: Sendable {
    private let filters = Mutex<[ShareService: RepeatedFailureFilter]>([:])

    func failed(_ service: ShareService, _ description: String) -> RepeatedFailureFilter.Decision {
        filters.withLock { $0[service, default: RepeatedFailureFilter()].failed(description) }
    }

    func succeeded(_ service: ShareService) -> RepeatedFailureFilter.Decision {
        filters.withLock { $0[service]?.succeeded() ?? .routine }
    }
}

/// The sinks by service, shared by the copies of the (value-type) service.
///
/// So a reload reaches the running one.
private final class SinkTable: Sendable {
    private let sinks: Mutex<[ShareService: any ShareSink]>

    init(_ sinks: [ShareService: any ShareSink]) {
        self.sinks = Mutex(sinks)
    }

    func sink(for service: ShareService) -> (any ShareSink)? {
        sinks.withLock { $0[service] }
    }

    func replace(_ sinks: [ShareService: any ShareSink]) {
        self.sinks.withLock { $0 = sinks }
    }
}
