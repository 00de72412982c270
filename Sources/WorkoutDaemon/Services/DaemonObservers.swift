import ControlPlane
import ControlProtocol
import Logging
import NIOCore
import Prometheus
import Replication
import SerialTransport
import WorkoutEngine
import WorkoutProtocol

/// What watches the daemon: metrics, the event stream and the counters behind `workoutctl`.
///
/// Made first in the composition root, because metrics bind to their backend when created.
struct DaemonObservers: Sendable {
    let metrics: DaemonMetrics
    let tally: ActivityTally
    let hub = ControlEventHub()

    /// `ownsProcess`: the metrics backend becomes the process's.
    init(ownsProcess: Bool) {
        metrics = DaemonMetrics(processWide: ownsProcess)
        tally = ActivityTally(metrics: metrics.factory)
    }

    /// Feeds the engine's events to the tallies, the handler latency and the event stream.
    ///
    /// A batch's ``EngineEvent/batchAnswered(_:)`` is the one report of its commands having been handled.
    func observe(_ engine: WorkoutEngine) {
        let handlerLatency = metrics.handlerLatency()
        engine.events.addBatchObserver { [tally, hub] emitted in
            tally.record(emitted)
            if let batch = emitted.answered, batch.origin == .device {
                handlerLatency.record(duration: batch.answered - batch.started)
            }
            hub.publish(contentsOf: emitted.events)
        }
    }

    /// For `DeviceManager(observer:)`: device connections into the event stream.
    var deviceObserver: DeviceActivity.Observer {
        { [hub] activity in hub.publish(activity) }
    }

    /// What the control socket and the web API answer from: one responder, one model.
    func responder(
        _ config: DaemonConfiguration,
        engine: WorkoutEngine,
        records: any RecordQueries,
        manager: DeviceManager,
        replication shipper: ReplicationShipper? = nil,
        storageProblem: (@Sendable () -> StorageProblem?)? = nil
    ) -> ControlResponder {
        let registry = metrics.registry
        var replication: (@Sendable () async -> ReplicationReport)?
        if let shipper { replication = { await shipper.report() } }
        return ControlResponder(
            identity: .init(version: WorkoutdVersion.current),
            engine: engine,
            records: records,
            manager: manager,
            tally: tally,
            hub: hub,
            maximumLineLength: config.serial.pipeline.maximumLineLength,
            metricsText: { registry.emitToString() },
            replication: replication,
            storageProblem: storageProblem,
            names: records as? any DeviceNameStore
        )
    }

    /// The control socket service, or nil when the configuration disables it.
    func controlServer(
        _ config: DaemonConfiguration,
        responder: ControlResponder,
        group: any EventLoopGroup,
        logger: Logger
    ) -> ControlServer? {
        guard let path = config.controlSocket else { return nil }
        let authorization = ControlAuthorization(readerGroup: config.controlSocketGroup)
        return ControlServer(
            options: ControlServerOptions(path: path, authorization: authorization),
            responder: responder,
            group: group,
            logger: logger
        )
    }
}
