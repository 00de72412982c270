import ServiceSupport
import WorkoutEngine
import WorkoutProtocol

/// How a device's node is (re)opened: exponential backoff between attempts, and when to stop.
public struct ReconnectPolicy: Sendable, Hashable {
    public var initialDelay: Duration
    public var maximumDelay: Duration
    /// Stop trying to open a node that stays unusable this long; `nil` keeps trying for ever.
    public var giveUpAfter: Duration?
    /// Reopen the path after the device goes away. Configured paths do; discovered devices wait
    /// for udev to announce them again instead.
    public var reopenAfterClose: Bool
    /// After `giveUpAfter`, how often to retry a node that exists but refuses the open (EPERM/EACCES).
    ///
    /// See ``OpenFailurePolicy``.
    public var refusedRetryDelay: Duration

    public init(
        initialDelay: Duration = .milliseconds(50),
        maximumDelay: Duration = .seconds(2),
        giveUpAfter: Duration? = nil,
        reopenAfterClose: Bool = true,
        refusedRetryDelay: Duration = .seconds(5)
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.giveUpAfter = giveUpAfter
        self.reopenAfterClose = reopenAfterClose
        self.refusedRetryDelay = refusedRetryDelay
    }

    /// The wait before retry number `attempt` (0 for the first retry).
    func delay(after attempt: Int) -> Duration {
        RetryBackoff(initial: min(initialDelay, maximumDelay), maximum: maximumDelay).delay(afterAttempts: attempt + 1)
    }
}

/// A device to serve: its node, who it is, and how to treat it.
public struct DeviceSpec: Sendable, Hashable {
    public var path: String
    public var identity: DeviceIdentity
    public var baud: UInt32
    public var policy: ReconnectPolicy
    /// Whether `devices.allowed_serials`, when set, applies.
    ///
    /// True for what udev found, false for a path the administrator named (naming it is enrolling it).
    public var requiresEnrolment: Bool

    public init(
        path: String,
        identity: DeviceIdentity,
        baud: UInt32 = SerialTransportConfiguration.defaultBaud,
        policy: ReconnectPolicy = ReconnectPolicy(),
        requiresEnrolment: Bool = false
    ) {
        self.path = path
        self.identity = identity
        self.baud = baud
        self.policy = policy
        self.requiresEnrolment = requiresEnrolment
    }
}
