import Synchronization

/// `limits.*`: what one device may cost the hub. The defaults live here; the daemon's configuration reads
/// the keys over them (Config/workoutd.yaml documents each one).
public struct DeviceLimits: Sendable, Hashable {
    public static let defaultCommandsPerSecond = 100
    public static let defaultCommandBurst = 1000
    public static let defaultPendingSharesPerDevice = 1000
    public static let defaultSessionIdleTimeout: Duration = .seconds(3600)

    /// `limits.commands_per_second`: the token bucket's refill rate per device; 0 turns the limit off.
    public var commandsPerSecond: Int
    /// `limits.command_burst`: how many commands a device may send at once after a pause.
    public var commandBurst: Int
    /// `limits.pending_shares_per_device`: undelivered shares one device may have queued; 0 = no limit.
    public var pendingSharesPerDevice: Int
    /// `limits.session_idle_timeout_s`: a session unused this long, whose device is gone, leaves memory.
    ///
    /// Its state and reply window stay on disk; `.zero` keeps sessions for the daemon's lifetime.
    public var sessionIdleTimeout: Duration

    public init(
        commandsPerSecond: Int = defaultCommandsPerSecond,
        commandBurst: Int = defaultCommandBurst,
        pendingSharesPerDevice: Int = defaultPendingSharesPerDevice,
        sessionIdleTimeout: Duration = defaultSessionIdleTimeout
    ) {
        self.commandsPerSecond = commandsPerSecond
        self.commandBurst = commandBurst
        self.pendingSharesPerDevice = pendingSharesPerDevice
        self.sessionIdleTimeout = sessionIdleTimeout
    }

    /// No limit at all: what tests and benchmarks that drive thousands of commands a second use.
    public static let unlimited = DeviceLimits(
        commandsPerSecond: 0,
        pendingSharesPerDevice: 0,
        sessionIdleTimeout: .zero
    )
}

/// The limits in force, shared by every session and replaced by a reload.
///
/// Read with atomic loads once per batch, so the hot path takes no lock.
final class LiveDeviceLimits: Sendable {
    private let commandsPerSecond: Atomic<Int>
    private let commandBurst: Atomic<Int>
    private let pendingSharesPerDevice: Atomic<Int>

    init(_ limits: DeviceLimits) {
        commandsPerSecond = Atomic(limits.commandsPerSecond)
        commandBurst = Atomic(limits.commandBurst)
        pendingSharesPerDevice = Atomic(limits.pendingSharesPerDevice)
    }

    func update(_ limits: DeviceLimits) {
        commandsPerSecond.store(limits.commandsPerSecond, ordering: .relaxed)
        commandBurst.store(limits.commandBurst, ordering: .relaxed)
        pendingSharesPerDevice.store(limits.pendingSharesPerDevice, ordering: .relaxed)
    }

    var rate: Int { commandsPerSecond.load(ordering: .relaxed) }
    var burst: Int { commandBurst.load(ordering: .relaxed) }
    var pendingShares: Int { pendingSharesPerDevice.load(ordering: .relaxed) }
}
