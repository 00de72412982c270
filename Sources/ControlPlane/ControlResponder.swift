import ControlProtocol
import Foundation
import NIOCore
import SerialTransport
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Answers control requests from the daemon's live state: its devices, engine, store and metrics.
///
/// Reads never touch a device's pipeline, so a bad or slow request cannot disturb a wearable; `send`
/// runs on the device's session exactly as one of its own lines would, in turn with them.
public final class ControlResponder: Sendable {
    /// What `status` reports about the daemon itself.
    public struct Identity: Sendable {
        public var version: String
        public var startedAt: Date
        public init(version: String, startedAt: Date = Date()) {
            self.version = version
            self.startedAt = startedAt
        }
    }

    private let identity: Identity
    private let engine: WorkoutEngine
    private let records: any RecordQueries
    private let manager: DeviceManager
    private let tally: ActivityTally
    private let hub: ControlEventHub
    /// `serial.max_line_bytes`, which a reload may change (``update(maximumLineLength:)``).
    private let maximumLineLengthSetting: Atomic<Int>
    private var maximumLineLength: Int { maximumLineLengthSetting.load(ordering: .relaxed) }
    private let metricsText: @Sendable () -> String
    private let clients = ClientCount()
    private let replication: (@Sendable () async -> ReplicationReport)?
    private let storageProblem: (@Sendable () -> StorageProblem?)?
    private let names: DeviceNames

    public init(
        identity: Identity,
        engine: WorkoutEngine,
        records: any RecordQueries,
        manager: DeviceManager,
        tally: ActivityTally,
        hub: ControlEventHub,
        maximumLineLength: Int,
        metricsText: @escaping @Sendable () -> String,
        replication: (@Sendable () async -> ReplicationReport)? = nil,
        storageProblem: (@Sendable () -> StorageProblem?)? = nil,
        names: (any DeviceNameStore)? = nil
    ) {
        self.names = DeviceNames(store: names)
        self.replication = replication
        self.storageProblem = storageProblem
        self.identity = identity
        self.engine = engine
        self.records = records
        self.manager = manager
        self.tally = tally
        self.hub = hub
        maximumLineLengthSetting = Atomic(maximumLineLength)
        self.metricsText = metricsText
    }

    var eventHub: ControlEventHub { hub }
    var clientCount: ClientCount { clients }

    /// The reply line for `request` (subscriptions are handled by the connection itself).
    func respond(to request: ControlRequest) async -> [UInt8] {
        let encoder = ControlSocket.makeEncoder()
        do {
            switch request.call {
            case .status:
                return try reply(request, try await status(), encoder)
            case .devices:
                return try reply(request, await devices(), encoder)
            case .workouts(let device, let limit, let since, let until):
                let query = WorkoutQuery(startedFrom: since, startedBefore: until, limit: limit)
                return try reply(
                    request,
                    WorkoutList(workouts: try await workouts(query, matching: device)),
                    encoder
                )
            case .shares(let limit):
                return try reply(request, try await shares(limit: limit), encoder)
            case .send(let device, let line, let create):
                return try reply(request, try await send(line, to: device, create: create), encoder)
            case .metrics:
                return try reply(request, metrics(), encoder)
            case .subscribe:
                return try reply(request, Subscription(), encoder)
            case .label(let device, let name):
                return try reply(request, try await label(device, name: name), encoder)
            }
        } catch let error as ControlError {
            return Self.errorLine(id: request.id, error)
        } catch {
            return Self.errorLine(
                id: request.id,
                ControlError(.unavailable, "The reply could not be produced: \(error).")
            )
        }
    }

    /// An error reply line; encoding a string and an id cannot fail, so this never throws.
    static func errorLine(id: ControlRequestID?, _ error: ControlError) -> [UInt8] {
        let response = ControlResponse<Subscription>(id: id, outcome: .failure(error))
        return (try? ControlSocket.line(response, encoder: ControlSocket.makeEncoder()))
            ?? Array(#"{"error":{"code":"unavailable","message":"The reply could not be encoded."},"id":null}"#.utf8)
            + [UInt8(ascii: "\n")]
    }

    /// A reload's `serial.max_line_bytes`.
    ///
    /// Lines sent from now on are held to it, as a device's new connections are.
    public func update(maximumLineLength: Int) {
        maximumLineLengthSetting.store(maximumLineLength, ordering: .relaxed)
    }

    private func reply<Value: Codable & Sendable>(
        _ request: ControlRequest,
        _ value: Value,
        _ encoder: JSONEncoder
    ) throws -> [UInt8] {
        try ControlSocket.line(ControlResponse(id: request.id, outcome: .success(value)), encoder: encoder)
    }

    // The answers themselves, typed: the control socket encodes them into its reply lines, the HTTP API
    // (WebServer) into its responses, so both show one model.

    /// `status`: the daemon's health and totals.
    public func status() async throws(ControlError) -> StatusReport {
        let devices = await manager.devices()
        let (active, queued) = try await storage {
            (try await self.records.activeSessionCount(), try await self.records.pendingShareCount())
        }
        return StatusReport(
            version: identity.version,
            pid: getpid(),
            startedAt: identity.startedAt,
            uptimeSeconds: (Date().timeIntervalSince(identity.startedAt) * 1000).rounded() / 1000,
            devicesAttached: devices.count,
            devicesConnected: devices.filter { $0.snapshot.connected }.count,
            devicesMissing: devices.filter {
                !$0.snapshot.connected && !FileManager.default.fileExists(atPath: $0.path)
            }
            .count,
            activeWorkouts: active,
            queuedShares: queued,
            controlClients: clients.current,
            eventSubscribers: hub.subscribers,
            counters: tally.counters,
            pendingRestart: tally.pendingRestart,
            replication: await replication?(),
            storageProblem: storageProblem?()
        )
    }

    /// `devices`.
    ///
    /// Served devices, then refused ones, and the unknown identities seen since start, each with its name.
    public func devices() async -> DeviceList {
        var devices = await manager.devices().map(Self.report) + (await manager.refusedDevices().map(Self.report))
        var unknown = await manager.unknownDevices().map(Self.report)
        // A store that cannot be read leaves the names out rather than the devices.
        let named = (try? await names.all()) ?? [:]
        for index in devices.indices { devices[index].name = named[DeviceIdentity(devices[index].identity)] }
        for index in unknown.indices { unknown[index].name = named[DeviceIdentity(unknown[index].identity)] }
        return DeviceList(devices: devices, unknown: unknown)
    }

    /// Workouts, newest first, of the devices whose serial, node or name contains `device`.
    ///
    /// The `workouts` method's, the API's and the page's filter. Letters match in any case; all devices when
    /// `device` is nil. `query` narrows them as for the other queries.
    public func workouts(_ query: WorkoutQuery, matching device: String?) async throws(ControlError) -> [WorkoutRecord]
    {
        var query = query
        if let device { query.devices = try await match(device) }
        return try await named(try await storage { [query] in try await self.records.workouts(matching: query) })
    }

    /// `shares`: newest first, with their delivery state.
    public func shares(limit: Int?) async throws(ControlError) -> ShareList {
        var shares = try await storage { try await self.records.shares(limit: limit) }
        let named = try await storage { try await self.names.all() }
        for index in shares.indices { shares[index].deviceName = named[shares[index].device] }
        return ShareList(shares: shares)
    }

    /// `label`: names the device given by identity or node, or forgets its name (`name` nil).
    public func label(_ device: String, name: String?) async throws(ControlError) -> LabelResult {
        var kept: String?
        if let name {
            switch DeviceName.validated(name) {
            case .success(let valid): kept = valid
            case .failure(let error): throw error
            }
        }
        guard names.isAvailable else {
            throw ControlError(.unavailable, "This store keeps no names (storage.backend).")
        }
        let identity = await resolve(device)
        try await storage { [kept] in try await self.names.set(kept, for: identity) }
        let attached = await manager.devices().contains { $0.identity == identity }
        return LabelResult(device: identity.rawValue, name: kept, attached: attached)
    }

    /// The devices `text` names in part: by identity (in the query itself), by node or by name.
    private func match(_ text: String) async throws(ControlError) -> DeviceMatch {
        var match = DeviceMatch(text: text)
        let folded = text.lowercased()
        for device in await manager.devices() where device.path.lowercased().contains(folded) {
            match.identities.insert(device.identity)
        }
        for (identity, name) in try await storage({ try await self.names.all() })
        where name.lowercased().contains(folded) {
            match.identities.insert(identity)
        }
        return match
    }

    /// `records` with their devices' names.
    private func named(_ records: [WorkoutRecord]) async throws(ControlError) -> [WorkoutRecord] {
        let named = try await storage { try await self.names.all() }
        guard !named.isEmpty else { return records }
        var records = records
        for index in records.indices { records[index].deviceName = named[records[index].device] }
        return records
    }

    /// `metrics`: the Prometheus text.
    public func metrics() -> MetricsReport {
        MetricsReport(text: metricsText())
    }

    /// Follows the event stream until the returned subscription is cancelled.
    ///
    /// `write` gets every event line (`{"event":{…}}` and a newline) from now on, on `eventLoop`. A client whose lines
    /// pile up beyond `limit` bytes gets `overflow` instead and no more lines.
    public func subscribeToEvents(
        on eventLoop: any EventLoop,
        limit: Int,
        write: @escaping @Sendable ([UInt8]) -> Void,
        overflow: @escaping @Sendable (Int) -> Void
    ) -> EventSubscription {
        let subscriber = EventSubscriber(eventLoop: eventLoop, limit: limit, write: write, overflow: overflow)
        hub.add(subscriber)
        return EventSubscription(hub: hub, subscriber: subscriber)
    }

    private func send(_ line: String, to device: String, create: Bool) async throws -> SendResult {
        let identity = create ? await resolve(device) : try await connectedDevice(device)
        let bytes = Array(line.utf8)
        // The same limit the device's framing applies, so an injected line behaves like a real one.
        let decoded =
            bytes.count > maximumLineLength
            ? DecodedLine(id: nil, command: .failure(.lineTooLong(limit: maximumLineLength)))
            : CommandLineDecoder().decode(bytes)
        // Its session publishes the command and its reply, as `origin: control`.
        let replies = await engine.session(for: identity).handle([decoded], from: .control)
        guard let reply = replies.first else {
            throw ControlError(.unavailable, "The session returned no reply.")
        }
        return SendResult(device: identity.rawValue, reply: reply)
    }

    /// A device named by its identity or by the node it is attached on.
    private func resolve(_ name: String) async -> DeviceIdentity {
        let devices = await manager.devices()
        if let attached = devices.first(where: { $0.identity.rawValue == name || $0.path == name }) {
            return attached.identity
        }
        return DeviceIdentity(name)
    }

    /// A connected device named by its identity or node.
    ///
    /// Otherwise the error lists the connected ones, so a typo never opens a session (and workouts) for a device that
    /// does not exist.
    private func connectedDevice(_ name: String) async throws -> DeviceIdentity {
        let connected = await manager.devices().filter { $0.snapshot.connected }
        if let device = connected.first(where: { $0.identity.rawValue == name || $0.path == name }) {
            return device.identity
        }
        let names = connected.map { "\($0.identity.rawValue) (\($0.path))" }
        throw ControlError(
            .unknownDevice,
            "no connected device '\(name)'; connected: \(names.isEmpty ? "none" : names.joined(separator: ", "))"
        )
    }

    private func storage<T: Sendable>(_ body: @Sendable () async throws -> T) async throws(ControlError) -> T {
        do {
            return try await body()
        } catch {
            throw ControlError(.unavailable, "The store could not be read: \(error).")
        }
    }

    private static func report(_ device: RefusedDevice) -> DeviceReport {
        DeviceReport(
            identity: device.identity.rawValue,
            node: device.path,
            connected: false,
            connectedSince: nil,
            commands: 0,
            errors: 0,
            connections: 0,
            refused: device.refusal.description
        )
    }

    private static func report(_ device: UnknownDevice) -> UnknownDeviceReport {
        UnknownDeviceReport(
            identity: device.identity.rawValue,
            node: device.path,
            firstSeen: device.firstSeen,
            lastSeen: device.lastSeen,
            sightings: device.sightings
        )
    }

    private static func report(_ stats: DeviceStats) -> DeviceReport {
        let snapshot = stats.snapshot
        return DeviceReport(
            identity: stats.identity.rawValue,
            node: stats.path,
            connected: snapshot.connected,
            connectedSince: snapshot.connectedSince,
            commands: snapshot.commands,
            errors: snapshot.errors,
            connections: snapshot.connections,
            waitingReason: snapshot.connected ? nil : snapshot.waitingReason
        )
    }
}
