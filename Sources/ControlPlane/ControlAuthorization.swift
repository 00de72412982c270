import CPosixTTY
import ControlProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Who may use the control socket, by the peer's credentials (`SO_PEERCRED`), never by the file's mode.
///
/// Root and the daemon's own user may do everything, members of the reader group (`control_socket_group`, default
/// `workoutd`: a static group from sysusers.d, so people can be added to it) may read, anyone else nothing.
public struct ControlAuthorization: Sendable, Hashable {
    public static let defaultReaderGroup = "workoutd"

    /// The daemon's effective uid.
    public var daemonUID: UInt32
    /// Whose members may read; nil: nobody besides root and the daemon's user.
    public var readerGroup: String?

    public init(daemonUID: UInt32 = geteuid(), readerGroup: String? = defaultReaderGroup) {
        self.daemonUID = daemonUID
        self.readerGroup = readerGroup
    }

    /// The reader group's gid, nil when it is not set or does not exist.
    ///
    /// It is looked up each time: the package may create the group after the daemon started. Blocking (NSS).
    func readerGroupID() -> UInt32? {
        guard let readerGroup, !readerGroup.isEmpty else { return nil }
        var gid: UInt32 = 0
        return wd_group_id(readerGroup, &gid) == 0 ? gid : nil
    }

    /// What `peer` may do. Blocking (NSS: the peer's groups come from the user and group databases, since
    /// `/proc/<pid>` of another user is hidden from the service): call it off the event loops.
    func access(for peer: wd_peer_credentials) -> ControlAccess {
        if peer.uid == 0 || peer.uid == daemonUID { return .write }
        guard let group = readerGroupID() else { return .none }
        if peer.gid == group || wd_user_in_group(peer.uid, peer.gid, group) == 1 { return .read }
        return .none
    }

    /// The refusal for `peer`, whose access is `access`, of a request of `method` that needs more.
    func denial(
        to peer: wd_peer_credentials,
        having access: ControlAccess,
        asking method: ControlMethod
    ) -> ControlError {
        let owners = "root or the daemon's user (uid \(daemonUID))"
        let readers = readerGroup.flatMap { $0.isEmpty ? nil : "members of group '\($0)'" }
        if access == .read {
            return ControlError(
                .permissionDenied,
                "permission denied: \(method.rawValue) needs \(owners); uid \(peer.uid) may only read"
            )
        }
        let who = readers.map { "\(owners); \($0) may read" } ?? owners
        return ControlError(
            .permissionDenied,
            "permission denied: uid \(peer.uid) may not use the control socket (allowed: \(who))"
        )
    }
}
