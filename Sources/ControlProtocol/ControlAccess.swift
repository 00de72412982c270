/// What a control client may do, decided by its peer credentials (`SO_PEERCRED`) when it connects.
///
/// Root and the daemon's own user may do everything; members of the reader group (`control_socket_group`,
/// default `workoutd`) may read; anyone else nothing, whatever the socket file's mode.
public enum ControlAccess: Int, Comparable, Sendable, Codable {
    /// Refused: every request is answered `permission_denied`.
    case none = 0
    /// `status`, `devices`, `workouts`, `shares`, `events` (`subscribe`), `metrics`.
    case read = 1
    /// Reads, `send` and `label`.
    ///
    /// `send` runs a line on a device's session (it can start, end or share a workout); `label` names a device.
    case write = 2

    public static func < (lhs: ControlAccess, rhs: ControlAccess) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension ControlMethod {
    /// The access a request of this method needs.
    ///
    /// `send` changes a device's session and `label` its name; everything else only reads.
    public var requiredAccess: ControlAccess {
        switch self {
        case .send, .label: .write
        case .status, .devices, .workouts, .shares, .metrics, .subscribe: .read
        }
    }
}
