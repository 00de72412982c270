import CPosixTTY
import Foundation
import Logging
import Metrics
import NIOCore
import NIOPosix
import Synchronization
import WorkoutEngine
import WorkoutProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Serves every attached device: opens its node, runs its pipeline, reopens it when the policy says so.
///
/// Devices come and go independently; one that fails to open or misbehaves never holds up another.
public actor DeviceManager {
    private let group: any EventLoopGroup
    /// Where the engine placed the devices' sessions, when it used this transport's placement.
    private let placement: SessionPlacement?
    private let engine: WorkoutEngine
    /// For pipelines built from now on; a reload may change it (``update(options:)``).
    private var options: PipelineOptions
    private let logger: Logger
    private let observer: DeviceActivity.Observer?
    private var attachments: [String: Attachment] = [:]
    /// Matching devices that are not served (their node is never opened), by node.
    ///
    /// Each comes with the spec to serve it by when it becomes admissible.
    private var refused: [String: (report: RefusedDevice, spec: DeviceSpec)] = [:]
    /// Which devices may be served: one node per identity, and the enrolled ones when a list is set.
    private var admission: DeviceAdmission
    private var shuttingDown = false
    /// Identities that have been connected before, so coming back counts as a reconnect.
    private var everConnected: Set<DeviceIdentity> = []
    /// Identities whose first sighting was checked (and announced when new) since start.
    private var sighted: Set<DeviceIdentity> = []
    private let reconnects: Counter
    private let metrics: any MetricsFactory
    /// The attached devices' counters by identity, fed from the engine's answered batches.
    private let statsByDevice = StatsByDevice()
    private let statsObserver: Int

    private struct Attachment {
        var spec: DeviceSpec
        var task: Task<Void, Never>
        var channel: (any Channel)?
        var stats: DeviceStats
    }

    public init(
        group: any EventLoopGroup,
        placement: SessionPlacement? = nil,
        engine: WorkoutEngine,
        options: PipelineOptions,
        logger: Logger,
        observer: DeviceActivity.Observer? = nil,
        allowedSerials: Set<String>? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        admission = DeviceAdmission(allowedSerials: allowedSerials)
        self.metrics = metrics
        reconnects = Counter(label: "workoutd_reconnects_total", factory: metrics)
        self.group = group
        self.placement = placement
        self.engine = engine
        self.options = options
        self.logger = logger
        self.observer = observer
        statsObserver = engine.events.addBatchObserver { [statsByDevice] emitted in
            if let batch = emitted.answered, batch.origin == .device { statsByDevice.count(batch) }
        }
    }

    deinit {
        engine.events.removeObserver(statsObserver)
    }

    /// Starts serving `spec.path`. A path already attached keeps its connection; its spec is updated and used
    /// from its next (re)open on (a replugged device may come back with another identity only if it really is
    /// another device).
    ///
    /// A device whose identity another node already serves, or (with `devices.allowed_serials`) that is not
    /// enrolled, is refused: logged at warning, listed by ``refusedDevices()``, its node never opened. One refused
    /// for its identity is served once the node holding that identity is detached.
    public func attach(_ spec: DeviceSpec) {
        guard !shuttingDown else { return }
        if var existing = attachments[spec.path], existing.spec.identity == spec.identity {
            existing.spec = spec
            attachments[spec.path] = existing
            return
        }
        if let refusal = admission.refusal(for: spec, served: attachments.mapValues(\.spec.identity)) {
            detach(path: spec.path)
            refuse(spec, refusal)
            return
        }
        detach(path: spec.path)
        let stats = DeviceStats(identity: spec.identity, path: spec.path)
        statsByDevice.add(stats)
        let task = Task { await self.serve(spec, stats: stats) }
        attachments[spec.path] = Attachment(spec: spec, task: task, channel: nil, stats: stats)
    }

    /// A reload's `serial.max_line_bytes`, `serial.max_pending_lines` and `serial.reply_line_ending`.
    ///
    /// Pipelines opened from now on are built with them, and every open one gets them as ``PipelineOptionsChanged`` on
    /// its own event loop (no connection is closed for it; see that event for when each setting takes hold). Returns
    /// once every open pipeline has the new options, so what the device sends after the reload is framed by them. (A
    /// new baud rate or reconnect delay comes with the device's spec: ``attach(_:)``.)
    public func update(options: PipelineOptions) async {
        guard options != self.options else { return }
        self.options = options
        for channel in attachments.values.compactMap(\.channel) {
            // Fails only when the channel closed meanwhile: a reconnect builds its pipeline with the new options.
            try? await channel.eventLoop.submit {
                channel.pipeline.syncOperations.fireUserInboundEventTriggered(PipelineOptionsChanged(options))
            }.get()
        }
    }

    /// Stops serving `path` (the device was removed). Lines already read are still answered if the
    /// device can take them; nothing committed is affected.
    public func detach(path: String) {
        refused[path] = nil
        guard let attachment = attachments.removeValue(forKey: path) else { return }
        statsByDevice.remove(attachment.stats)
        attachment.task.cancel()
        attachment.channel?.close(promise: nil)
        serveRefused(sharing: attachment.spec.identity)
    }

    /// Currently attached devices and their counters.
    public func devices() -> [DeviceStats] {
        attachments.values.map(\.stats).sorted { $0.path < $1.path }
    }

    /// Matching devices that are not served, and why.
    public func refusedDevices() -> [RefusedDevice] {
        refused.values.map(\.report).sorted { $0.path < $1.path }
    }

    /// Identities refused since start for not being in `devices.allowed_serials`.
    ///
    /// At most 256 are kept, the newest.
    public func unknownDevices() -> [UnknownDevice] {
        admission.unknown.values.sorted { $0.firstSeen < $1.firstSeen }
    }

    /// A reload's `devices.allowed_serials` (nil: every identity). Applies to devices that appear from now on and
    /// to those refused as not enrolled, which are served at once when now listed; devices already served stay
    /// connected (a reload never cuts a wearable off; unplug it, or restart, to apply a shorter list to it).
    public func update(allowedSerials: Set<String>?) {
        guard allowedSerials != admission.allowedSerials else { return }
        admission.allowedSerials = allowedSerials
        admission.forgetEnrolled()
        for (path, device) in refused
        where device.report.refusal == .notEnrolled
            && admission.refusal(for: device.spec, served: attachments.mapValues(\.spec.identity)) != .notEnrolled
        {
            logger.notice(
                "serving device now enrolled",
                metadata: ["device": "\(device.spec.identity)", "node": "\(path)"]
            )
            refused[path] = nil
            attach(device.spec)
        }
    }

    /// Records `spec` as refused.
    ///
    /// Logs it once per node, identity and reason (udev's `change` events repeat it).
    private func refuse(_ spec: DeviceSpec, _ refusal: DeviceRefusal) {
        let previous = refused[spec.path]?.report
        if refusal == .notEnrolled { admission.noteUnknown(spec) }
        if let previous, previous.identity == spec.identity, previous.refusal == refusal {
            refused[spec.path]?.spec = spec
            return
        }
        refused[spec.path] = (
            RefusedDevice(identity: spec.identity, path: spec.path, refusal: refusal, since: Date()), spec
        )
        let metadata: Logger.Metadata = ["device": "\(spec.identity)", "node": "\(spec.path)", "reason": "\(refusal)"]
        switch refusal {
        case .notEnrolled:
            logger.warning(
                "refusing device: not enrolled in devices.allowed_serials; its node stays closed",
                metadata: metadata
            )
        case .identityInUse:
            logger.warning(
                "refusing device: its identity is already attached on another node; its node stays closed",
                metadata: metadata
            )
        }
    }

    /// Serves a device refused because `identity` was in use, now that the node holding it is gone.
    private func serveRefused(sharing identity: DeviceIdentity) {
        guard !shuttingDown,
            let path = refused.filter({
                $0.value.report.identity == identity && $0.value.report.refusal != .notEnrolled
            }).keys.min(),
            let spec = refused.removeValue(forKey: path)?.spec
        else { return }
        logger.notice(
            "serving device refused earlier: the node that held its identity is gone",
            metadata: [
                "device": "\(identity)", "node": "\(path)",
            ]
        )
        attach(spec)
    }

    /// Logs the first sighting of an identity at notice, once it answered as a wearable.
    ///
    /// That is, at its first decoded command. A configured path that is missing, is not a tty (a typo such as `/etc/hostname`) or never sends a command is
    /// never announced. Since start, and not when the store already had a session for it when it connected (a
    /// wearable the hub knew before a restart is not announced again).
    ///
    /// Called once the node opened, before its pipeline reads: the store is asked before the device can change it.
    private func announceFirstSighting(_ spec: DeviceSpec, stats: DeviceStats) async {
        guard sighted.insert(spec.identity).inserted else { return }
        let snapshot = try? await engine.store.restore(spec.identity)
        guard snapshot == nil || snapshot == DeviceSnapshot() else { return }
        stats.announceOnFirstCommand(logger)
    }

    /// Graceful shutdown: stop reading everywhere, answer what was read, flush, close.
    /// Devices that cannot take their replies within `timeout` are closed regardless.
    public func drainAll(timeout: Duration = SerialTransportConfiguration.defaultDrainTimeout) async {
        shuttingDown = true
        let channels = attachments.values.compactMap(\.channel)
        for attachment in attachments.values { attachment.task.cancel() }
        for channel in channels {
            channel.pipeline.fireUserInboundEventTriggered(DrainRequest())
        }
        let deadline = ContinuousClock.now + timeout
        for channel in channels {
            let closed = await withTaskGroup(of: Bool.self) { group in
                group.addTask { (try? await channel.closeFuture.get()) != nil }
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if !closed { try? await channel.close() }
        }
        for attachment in attachments.values { await attachment.task.value }
        for attachment in attachments.values { statsByDevice.remove(attachment.stats) }
        attachments.removeAll()
    }

    private func serve(_ attached: DeviceSpec, stats: DeviceStats) async {
        var spec = attached
        var logger = self.logger
        logger[metadataKey: "device"] = "\(spec.identity)"
        logger[metadataKey: "node"] = "\(spec.path)"
        let session = engine.session(for: spec.identity)
        var attempts = DeviceOpenAttempts()

        while !Task.isCancelled && !shuttingDown {
            // A reload may have changed the baud rate or the delays since the last attempt.
            if let current = attachments[spec.path], current.stats === stats { spec = current.spec }
            let fd: CInt
            do {
                fd = try SerialPort.open(path: spec.path, baud: spec.baud)
            } catch {
                stats.waiting(error.summary)
                let next = attempts.openFailed(
                    error,
                    policy: spec.policy,
                    nodeExists: access(spec.path, F_OK) == 0,
                    logger: logger
                )
                guard case .retry(let delay) = next else { break }
                do { try await Task.sleep(for: delay) } catch { break }
                continue
            }
            let failedOpens = attempts.opened(logger: logger)
            await announceFirstSighting(spec, stats: stats)

            let channel: any Channel
            let builtWith = options
            do {
                channel = try await bootstrap(session: session, options: builtWith, logger: logger, fd: fd)
                    .takingOwnershipOfDescriptor(inputOutput: fd).get()
            } catch {
                // NIO hands the descriptor back when it refuses it: close it and retry like a failed open.
                Glibc.close(fd)
                logger.error("could not start the device pipeline; retrying", metadata: ["error": "\(error)"])
                do { try await Task.sleep(for: attempts.pipelineFailed(policy: spec.policy)) } catch { break }
                continue
            }
            guard setChannel(channel, for: spec.path, stats: stats, builtWith: builtWith) else {
                try? await channel.close()
                break
            }
            stats.connected()
            if !everConnected.insert(spec.identity).inserted { reconnects.increment() }
            logger.info("device connected", metadata: failedOpens.map { ["after_failed_opens": "\($0)"] } ?? [:])
            observer?(.connected(stats))
            try? await channel.closeFuture.get()
            stats.disconnected()
            clearChannel(for: spec.path, stats: stats)
            logger.info("device disconnected")
            observer?(.disconnected(stats))
            guard spec.policy.reopenAfterClose else { break }
        }
        if attachments[spec.path]?.stats === stats, !shuttingDown {
            attachments[spec.path] = nil
            statsByDevice.remove(stats)
            serveRefused(sharing: spec.identity)
        }
    }

    private func setChannel(
        _ channel: any Channel,
        for path: String,
        stats: DeviceStats,
        builtWith: PipelineOptions
    ) -> Bool {
        guard !shuttingDown, attachments[path]?.stats === stats else { return false }
        attachments[path]?.channel = channel
        // A reload that came while the pipeline was being built did not reach it: bring it up to date.
        if builtWith != options { channel.pipeline.fireUserInboundEventTriggered(PipelineOptionsChanged(options)) }
        return true
    }

    private func clearChannel(for path: String, stats: DeviceStats) {
        if attachments[path]?.stats === stats { attachments[path]?.channel = nil }
    }

    private nonisolated func bootstrap(
        session: DeviceSession,
        options: PipelineOptions,
        logger: Logger,
        fd: CInt
    ) -> NIOPipeBootstrap {
        // On the session's loop when it was placed on one, so its batches never leave the channel's thread.
        let loop = placement?.loop(for: session.identity)
        let metrics = metrics
        return NIOPipeBootstrap(group: loop ?? group)
            .channelOption(.autoRead, value: true)
            // Small marks (a few hundred replies) bound how many committed replies can wait unsent.
            .channelOption(.writeBufferWaterMark, value: .init(low: 8 * 1024, high: 16 * 1024))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // The session runs on this channel's loop, so the handler may enter it directly. Input the
                    // tty holds unread keeps a pipelining device off a durable store's commit in place.
                    // A batch's events wait until its replies are written (see DeviceSession.answerImmediately).
                    let asksForInput = session.immediateCommitWaitsForDisk
                    let immediately: CommandDispatchHandler.ProcessImmediately? = loop.map { _ in
                        { lines in
                            session.answerImmediatelyInPlace(
                                lines,
                                inputWaiting: asksForInput && SerialPort.unreadBytes(fd) > 0
                            )
                        }
                    }
                    let announce: CommandDispatchHandler.AnnounceAnswered? = loop.map { _ in
                        { session.announceAnsweredInPlace() }
                    }
                    // The session emits the batch's events (received, what it caused, answered) itself: after
                    // the replies are written when the handler can announce them, else before it returns them.
                    let holdingEvents = announce != nil
                    try DevicePipeline.addHandlers(
                        to: channel.pipeline.syncOperations,
                        options: options,
                        logger: logger,
                        metrics: metrics,
                        unreadInput: { SerialPort.unreadBytes(fd) },
                        processImmediately: immediately,
                        announceAnswered: announce
                    ) { lines in await session.handle(lines, holdingEvents: holdingEvents) }
                }
            }
    }
}

/// Attached devices' ``DeviceStats`` by identity.
///
/// So one engine observer can count every device's batches.
private final class StatsByDevice: Sendable {
    private let byIdentity = Mutex<[DeviceIdentity: DeviceStats]>([:])

    func add(_ stats: DeviceStats) {
        byIdentity.withLock { $0[stats.identity] = stats }
    }

    /// Forgets `stats` unless its identity is already served by a newer attachment.
    func remove(_ stats: DeviceStats) {
        byIdentity.withLock { if $0[stats.identity] === stats { $0[stats.identity] = nil } }
    }

    func count(_ batch: AnsweredBatch) {
        guard let stats = byIdentity.withLock({ $0[batch.device] }) else { return }
        stats.handled(commands: batch.replies.count, errors: batch.replies.count { !$0.isSuccess })
        stats.announceIfAnswered(batch)
    }
}
