#if canImport(Glibc)
import Glibc
#endif

/// What to do after a device node failed to open: a pure decision, so it is tested without devices.
///
/// Within ``ReconnectPolicy/giveUpAfter`` every failure is retried quietly: udev may still be applying
/// the node's group. After that, a node that is *refused* (EPERM: the device cgroup; EACCES: the node's
/// owner and mode) but still exists is not given up on: a refusal is a configuration problem the
/// administrator can fix while the daemon runs (or one a restart fixes), and a daemon that stopped
/// trying would report itself healthy while serving nothing. It is reported once at `error`, with the
/// likely cause, and retried at ``ReconnectPolicy/refusedRetryDelay`` until the node goes away (udev's
/// remove event stops the attempt). Any other failure past the limit gives up, as before.
public enum OpenFailureDecision: Equatable, Sendable {
    /// Retry after `delay`; `report` says whether this failure is the one to log at error.
    case retry(delay: Duration, report: Bool)
    case giveUp
}

public struct OpenFailurePolicy: Sendable {
    public let policy: ReconnectPolicy

    public init(_ policy: ReconnectPolicy) { self.policy = policy }

    /// - Parameters:
    ///   - errno: why the open failed.
    ///   - attempt: failures so far in this run of failures (0 for the first).
    ///   - failingFor: time since the first failure of this run.
    ///   - nodeExists: whether the device node is still there.
    ///   - reported: whether the refusal was already logged at error in this run.
    public func decide(
        errno: Int32,
        attempt: Int,
        failingFor: Duration,
        nodeExists: Bool,
        reported: Bool
    ) -> OpenFailureDecision {
        guard let limit = policy.giveUpAfter, failingFor >= limit else {
            return .retry(delay: policy.delay(after: attempt), report: false)
        }
        guard Self.isRefusal(errno), nodeExists else { return .giveUp }
        return .retry(delay: max(policy.delay(after: attempt), policy.refusedRetryDelay), report: !reported)
    }

    static func isRefusal(_ errno: Int32) -> Bool { errno == EPERM || errno == EACCES }

    /// The group the udev rule gives a wearable's node; the daemon's user must be in it to open the node.
    public static let wearableGroup = "workoutd-wearable"

    /// The name of the user the daemon runs as, for a command to paste; its uid when it has no name.
    static var daemonUser: String {
        let uid = geteuid()
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "\(uid)" }
        return String(cString: name)
    }

    /// The likely cause of a refusal, for the log line an administrator reads.
    public static func hint(errno: Int32) -> String {
        switch errno {
        case EPERM:
            return "the service's device cgroup refuses the node: its driver was probably loaded after the service "
                + "started, so DeviceAllow=char-ttyACM/char-ttyUSB did not cover its major; load the driver at boot "
                + "(modules-load.d/workoutd.conf) and run 'systemctl restart workoutd'"
        case EACCES:
            let user = daemonUser
            return "the node's owner and mode do not let user \(user) open it: the udev rule (60-workoutd.rules) gives "
                + "wearables GROUP=\"\(wearableGroup)\" MODE=\"0660\", and the daemon's user must be in that group: "
                + "'usermod -aG \(wearableGroup) \(user)' and restart workoutd (the packaged unit has "
                + "SupplementaryGroups=\(wearableGroup)); check the node with 'ls -l' and 'udevadm info'"
        default:
            return "check the node's permissions"
        }
    }
}
