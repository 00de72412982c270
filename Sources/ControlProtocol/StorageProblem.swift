import Foundation

/// Why storing fails right now (`status`).
///
/// Every command that would store something is answered with `storage_unavailable` until it recovers. Nil in a status
/// means storage works.
public struct StorageProblem: Codable, Hashable, Sendable {
    /// When the first of the current run of failures happened.
    public var since: Date
    /// SQLite's error for the newest failure, e.g. `SQLITE_IOERR: disk I/O error` or `SQLITE_READONLY: …`.
    public var reason: String

    public init(since: Date, reason: String) {
        self.since = since
        self.reason = reason
    }
}
