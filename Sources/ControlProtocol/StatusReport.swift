import Foundation

/// The `status` result: is the daemon healthy, and how busy has it been since it started.
public struct StatusReport: Codable, Hashable, Sendable {
    public var version: String
    public var pid: Int32
    public var startedAt: Date
    public var uptimeSeconds: Double
    /// Devices attached (configured or discovered), and how many of them are connected right now.
    public var devicesAttached: Int
    public var devicesConnected: Int
    /// Attached devices not connected because their path does not exist (a configured wearable unplugged).
    ///
    /// Nil from a daemon that does not count them.
    public var devicesMissing: Int?
    public var activeWorkouts: Int
    /// Shares waiting for delivery.
    public var queuedShares: Int
    public var controlClients: Int
    /// Clients following the event stream.
    public var eventSubscribers: Int
    public var counters: ActivityCounters
    /// Configuration keys changed by a reload that take effect only after a restart (e.g. `state_dir`).
    public var pendingRestart: [String]
    /// Nil when replication is off.
    public var replication: ReplicationReport?
    /// Nil while storage works; otherwise why commands get `storage_unavailable`.
    public var storageProblem: StorageProblem?

    public init(
        version: String,
        pid: Int32,
        startedAt: Date,
        uptimeSeconds: Double,
        devicesAttached: Int,
        devicesConnected: Int,
        devicesMissing: Int? = nil,
        activeWorkouts: Int,
        queuedShares: Int,
        controlClients: Int,
        eventSubscribers: Int,
        counters: ActivityCounters,
        pendingRestart: [String] = [],
        replication: ReplicationReport? = nil,
        storageProblem: StorageProblem? = nil
    ) {
        self.version = version
        self.pid = pid
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.devicesAttached = devicesAttached
        self.devicesConnected = devicesConnected
        self.devicesMissing = devicesMissing
        self.activeWorkouts = activeWorkouts
        self.queuedShares = queuedShares
        self.controlClients = controlClients
        self.eventSubscribers = eventSubscribers
        self.counters = counters
        self.pendingRestart = pendingRestart
        self.replication = replication
        self.storageProblem = storageProblem
    }
}

/// Totals since the daemon started, over every device and the control socket's `send`.
public struct ActivityCounters: Codable, Hashable, Sendable {
    public var commands = 0
    /// Commands answered with an error reply (invalid lines included).
    public var errors = 0
    /// Lines that did not decode into a command (malformed JSON, unknown command, invalid field, too long).
    public var invalidLines = 0
    /// Retried command ids answered with their stored reply.
    public var replays = 0
    public var workoutsStarted = 0
    public var workoutsEnded = 0
    public var sharesQueued = 0
    public var sharesDelivered = 0
    public var shareFailures = 0
    /// Configuration reloads applied and rejected.
    public var reloads = 0
    public var rejectedReloads = 0

    public init() {}
}

extension StatusReport {
    /// The devices line of `workoutctl status`: `2 connected, 1 waiting, 1 configured path missing`.
    ///
    /// Each count means one thing: connected wearables; attached ones present but not served (`workoutctl devices`
    /// says why); configured paths with nothing on them.
    public var devicesSummary: String {
        let missing = devicesMissing ?? 0
        let waiting = max(0, devicesAttached - devicesConnected - missing)
        var parts = ["\(devicesConnected) connected"]
        if waiting > 0 { parts.append("\(waiting) waiting") }
        if missing > 0 { parts.append("\(missing) configured \(missing == 1 ? "path" : "paths") missing") }
        return parts.joined(separator: ", ")
    }
}
