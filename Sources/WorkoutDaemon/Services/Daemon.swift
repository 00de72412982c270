import DeviceDiscovery
import Foundation
import Logging
import Metrics
import NIOCore
import NIOPosix
import Replication
import SerialTransport
import ServiceLifecycle
import ShareDelivery
import SystemdSupport
import WebServer
import WorkoutEngine
import WorkoutProtocol
import WorkoutStorage

/// The composition root: builds the engine, storage and transports from the configuration.
///
/// It runs them as one service group that shuts down gracefully on SIGTERM/SIGINT.
enum Daemon {
    /// How the assembly runs: as the daemon that owns the process, or embedded in a test process.
    struct Mode: Sendable {
        /// The process is the daemon's: SIGTERM and SIGINT stop it, SIGHUP reloads, start-up code is released.
        var ownsProcess = true
        var logLevel: DaemonLogLevel = .process
        /// Called once devices can be served: when systemd hears READY=1.
        var ready: @Sendable () -> Void = {}
        /// Handed the reloader and the service group once they are assembled, before anything runs.
        var assembled: @Sendable (ConfigurationReloader, ServiceGroup) -> Void = { _, _ in }
    }

    /// `stateLock`: the state directory's lock, held by the caller before anything there is opened.
    ///
    /// Nil for the in-memory store.
    static func run(
        _ config: DaemonConfiguration,
        stateLock: HeldStateDirectoryLock?,
        logger: Logger,
        mode: Mode = Mode()
    ) async throws {
        let observers = DaemonObservers(ownsProcess: mode.ownsProcess)
        let doorbell = config.replication == nil ? nil : ReplicationDoorbell()
        let store = try openStore(config, replicationDoorbell: doorbell)
        if let sqlite = store as? SQLiteWorkoutStore, sqlite.backFilledForReplication > 0 {
            logger.info(
                "replication: history committed without it queued for shipping",
                metadata: [
                    "records": "\(sqlite.backFilledForReplication)"
                ]
            )
        }
        // The transport decides where sessions run: each on its device's event loop.
        let placement = SessionPlacement(group: MultiThreadedEventLoopGroup.singleton)
        let clock = WorkoutClock.system(assumeSynchronized: config.clockAssumedSynchronized)
        let engine = try await WorkoutEngine(
            store: store,
            clock: clock,
            sessionExecutor: placement.sessionExecutor,
            limits: config.limits
        )
        let eviction = SessionEviction(
            engine: engine,
            timeout: config.limits.sessionIdleTimeout,
            logger: logger,
            metrics: observers.metrics.factory
        )
        observers.observe(engine)
        let memoryRelease = MemoryRelease(loop: MultiThreadedEventLoopGroup.singleton.any())
        _ = engine.events.addBatchObserver { _ in memoryRelease.noteActivity() }
        let storageFailures = StorageFailureLog(logger: logger)
        storageFailures.observe(engine.events)
        let systemd = SystemdServices(logger: logger, notifier: mode.ownsProcess ? SystemdNotifier() : .disconnected)
        systemd.observe(engine.events)
        let manager = DeviceManager(
            group: MultiThreadedEventLoopGroup.singleton,
            placement: placement,
            engine: engine,
            options: config.serial.pipeline,
            logger: logger,
            observer: { [events = observers.deviceObserver, status = systemd.deviceObserver] activity in
                events(activity)
                status(activity)
            },
            allowedSerials: config.allowedSerials,
            metrics: observers.metrics.factory
        )
        let staticDevices = config.devices.map { path in
            DeviceSpec(
                path: path,
                identity: DeviceIdentity(path),
                baud: config.serial.baud,
                policy: config.serial.reconnect
            )
        }
        let serial = SerialDeviceService(
            manager: manager,
            staticDevices: staticDevices,
            drainTimeout: config.serial.drainTimeout
        )

        let reloader = ConfigurationReloader(
            config,
            tally: observers.tally,
            notifier: systemd.notifier,
            trapsSignal: mode.ownsProcess,
            logger: logger
        )
        reloader.register(.logLevel(mode.logLevel))
        reloader.register(.configuredDevices(manager))
        reloader.register(.limits(engine, eviction: eviction, store: store as? SQLiteWorkoutStore))
        let delivery = ShareDeliveryService(
            store: store,
            sinks: config.shares.sinks.makeSinks(stateDirectory: config.stateDirectory),
            events: engine.events,
            configuration: config.shares,
            logger: logger
        )
        reloader.register(.shareSinks(delivery, stateDirectory: config.stateDirectory))
        var services: [any Service] = [
            systemd.watchdog(eventLoopGroup: MultiThreadedEventLoopGroup.singleton), delivery, serial, reloader,
            eviction,
        ]
        if let sqlite = store as? SQLiteWorkoutStore {
            services.append(ClockCorrection(clock: clock, store: sqlite, logger: logger))
            services.append(StorageRecovery(store: sqlite, lock: stateLock, failures: storageFailures, logger: logger))
        }
        let shipper = try makeShipper(
            config,
            store: store,
            doorbell: doorbell,
            logger: logger,
            metrics: observers.metrics.factory,
            // The heartbeat's counts, as `workoutctl status` gives them.
            activity: { [manager, store] in
                HubActivity(
                    wearablesConnected: await manager.devices().filter { $0.snapshot.connected }.count,
                    activeWorkouts: try? await store.activeSessionCount()
                )
            }
        )
        if let shipper, let replication = config.replication {
            services.append(shipper)
            reloader.register(.replicationPassword(shipper, current: replication))
        }
        let responder = observers.responder(
            config,
            engine: engine,
            records: store,
            manager: manager,
            replication: shipper,
            storageProblem: { storageFailures.problem }
        )
        reloader.register(.controlLineLimit(responder))
        if let control = observers.controlServer(
            config,
            responder: responder,
            group: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        ) {
            // Bound before anything is served: a daemon that workoutctl cannot reach stops here, not after `ready`.
            try await control.listen()
            services.append(control)
        }
        // Also when `web.listen` is off: a reload that turns it on starts it.
        let web = WebServer(configuration: config.web, responder: responder, logger: logger) {
            AllocatorTrim.trim()
        }
        services.append(web)
        reloader.register(.web(web))
        // After `serial`, so shutdown (in reverse order) stops discovering before the devices drain.
        // Also when disabled: it then touches no udev, and a reload that enables it starts it.
        let discovery = DiscoveryService(
            manager: manager,
            matcher: config.discovery,
            baud: config.serial.baud,
            logger: logger
        )
        services.append(discovery)
        reloader.register(.discoveryRules(discovery))
        // A database too large to read whole before READY=1 is checked once serving has started.
        let integrity = StorageIntegrityCheck.Outcome()
        if let sqlite = store as? SQLiteWorkoutStore, !sqlite.integrityCheckedAtOpen {
            services.append(
                StorageIntegrityCheck(
                    store: sqlite,
                    outcome: integrity,
                    logger: logger,
                    untilReady: { try await discovery.waitUntilReady() },
                    failed: { systemd.noteStatusChange() }
                )
            )
        }
        services.append(
            systemd.status(
                manager: manager,
                records: store,
                untilReady: {
                    // Ready means every way in is open: devices, workoutctl (bound above), and a reload that does
                    // not end us.
                    try await discovery.waitUntilReady()
                    try await reloader.waitUntilArmed()
                    if mode.ownsProcess { StartupCodeRelease.release() }
                    mode.ready()
                },
                storageProblem: { integrity.failure }
            )
        )
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: mode.ownsProcess ? [.sigterm, .sigint] : [],
            logger: logger
        )
        // Shutdown is bounded: devices get their drain time, then whatever still runs is cancelled, so a
        // stuck service can never outlast systemd's stop timeout and end in SIGKILL.
        groupConfiguration.maximumGracefulShutdownDuration = config.serial.drainTimeout + .seconds(5)
        groupConfiguration.maximumCancellationDuration = .seconds(2)
        let group = ServiceGroup(configuration: groupConfiguration)
        mode.assembled(reloader, group)
        logger.info(
            "workoutd started",
            metadata: [
                "devices": "\(config.devices.joined(separator: ","))",
                "state_dir": "\(config.stateDirectory)",
            ]
        )
        defer {
            // Embedded in a test process, the daemon ends without its process: the next one opens the database.
            if !mode.ownsProcess { try? (store as? SQLiteWorkoutStore)?.close() }
        }
        try await group.run()
        logger.info("workoutd stopped")
    }

    /// SQLite in the state directory, or memory when configured (benchmarks, throwaway runs).
    private static func openStore(
        _ config: DaemonConfiguration,
        replicationDoorbell: ReplicationDoorbell?
    ) throws -> any WorkoutStore {
        switch config.storage.backend {
        case .memory:
            return InMemoryWorkoutStore()
        case .sqlite:
            return try SQLiteWorkoutStore(
                stateDirectory: config.stateDirectory,
                replicationDoorbell: replicationDoorbell,
                maximumDatabaseBytes: config.storage.maximumDatabaseBytes,
                softwareVersion: WorkoutdVersion.current
            )
        }
    }

    /// The replication shipper when `replication.postgres_url` is set.
    ///
    /// The configuration ensures a SQLite store then.
    private static func makeShipper(
        _ config: DaemonConfiguration,
        store: any WorkoutStore,
        doorbell: ReplicationDoorbell?,
        logger: Logger,
        metrics: any MetricsFactory,
        activity: @escaping @Sendable () async -> HubActivity
    ) throws -> ReplicationShipper? {
        guard let replication = config.replication, let doorbell, let log = store as? any ReplicationLog else {
            return nil
        }
        do {
            return try ReplicationShipper(
                configuration: replication,
                log: log,
                doorbell: doorbell,
                softwareVersion: WorkoutdVersion.current,
                logger: logger,
                metrics: metrics,
                activity: activity
            )
        } catch {
            throw ConfigurationError(key: error.key ?? "replication.password_file", problem: error.description)
        }
    }
}
