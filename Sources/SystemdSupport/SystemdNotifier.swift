import CSystemd
import Glibc

/// Tells the service manager about the daemon's state through libsystemd's `sd_notify(3)`.
///
/// Started by hand (no `NOTIFY_SOCKET` in the environment) every call is a no-op, so the daemon
/// behaves the same with or without systemd.
public struct SystemdNotifier: Sendable {
    /// Whether a service manager is listening (`NOTIFY_SOCKET` was set at start).
    public let isConnected: Bool

    public init() {
        isConnected = getenv("NOTIFY_SOCKET") != nil
    }

    /// A notifier that tells nobody, whatever the environment says.
    ///
    /// For a daemon embedded in a test process: it is not the service the service manager started.
    public static var disconnected: SystemdNotifier { SystemdNotifier(isConnected: false) }

    private init(isConnected: Bool) {
        self.isConnected = isConnected
    }

    /// `READY=1`: start-up is complete; `systemctl start` returns now.
    @discardableResult
    public func ready(status: String? = nil) -> Bool {
        send(["READY=1"] + statusField(status))
    }

    /// `STATUS=`: one line a person reads in `systemctl status`.
    @discardableResult
    public func status(_ text: String) -> Bool {
        send(statusField(text))
    }

    /// `RELOADING=1`: a configuration reload has begun.
    ///
    /// `systemctl reload` waits for the next ``ready(status:)``. `MONOTONIC_USEC` is when it began, which systemd 253+
    /// requires for `Type=notify-reload` and older versions ignore.
    @discardableResult
    public func reloading() -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return send(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)"])
    }

    /// `STOPPING=1`: graceful shutdown has begun.
    @discardableResult
    public func stopping(status: String? = nil) -> Bool {
        send(["STOPPING=1"] + statusField(status))
    }

    /// `WATCHDOG=1`: the daemon is alive; see ``watchdogInterval``.
    @discardableResult
    public func watchdogPing() -> Bool {
        send(["WATCHDOG=1"])
    }

    /// The unit's `WatchdogSec=` when systemd expects pings from this process, otherwise nil.
    public var watchdogInterval: Duration? {
        var microseconds: UInt64 = 0
        // Also checks WATCHDOG_PID, so a child that inherited the environment does not ping for its parent.
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    private func statusField(_ text: String?) -> [String] {
        guard let text else { return [] }
        // A newline would end the field and could inject another assignment.
        let oneLine = text.map { $0.isNewline ? " " : String($0) }.joined()
        return ["STATUS=" + oneLine]
    }

    private func send(_ fields: [String]) -> Bool {
        guard isConnected, !fields.isEmpty else { return false }
        return sd_notify(0, fields.joined(separator: "\n")) > 0
    }
}
