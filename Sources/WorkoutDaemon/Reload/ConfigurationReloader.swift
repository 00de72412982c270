import ControlPlane
import Logging
import ServiceLifecycle
import Synchronization
import SystemdSupport
import UnixSignals
import WorkoutEngine

/// A part of the daemon that can take a new configuration without a restart.
///
/// `prepare` checks the new configuration and returns the change to make; nothing is applied
/// unless every part prepared successfully, so a rejected reload leaves the old configuration whole.
struct ReloadHook: Sendable {
    typealias Apply = @Sendable () async -> Void

    var name: String
    var prepare: @Sendable (DaemonConfiguration) async throws -> Apply
}

/// Re-reads the configuration on SIGHUP and hands it to the registered hooks.
///
/// SIGHUP is what `systemctl reload workoutd` sends.
///
/// An invalid configuration is rejected with the reason logged; the one in force stays. Keys read only at
/// start (`state_dir`, `storage.backend`, `control_socket`, …) are never reported as applied: a change to one is
/// logged once and listed by `workoutctl status` until a restart. systemd hears `RELOADING=1` … `READY=1`.
final class ConfigurationReloader: Service, Sendable {
    /// The configuration the daemon started with: what restart-only keys are compared against.
    private let started: DaemonConfiguration
    private let current: Mutex<DaemonConfiguration>
    /// Restart-only changes already logged (key → new value), so each is logged once, not on every reload.
    private let announced = Mutex<[String: String]>([:])
    private let hooks = Mutex<[ReloadHook]>([])
    private let tally: ActivityTally
    private let notifier: SystemdNotifier
    /// Whether SIGHUP reloads; a daemon embedded in a test process is reloaded by calling ``reload()``.
    private let trapsSignal: Bool
    private let armed = OneShot<Void>()
    private let logger: Logger

    init(
        _ configuration: DaemonConfiguration,
        tally: ActivityTally,
        notifier: SystemdNotifier,
        trapsSignal: Bool = true,
        logger: Logger
    ) {
        started = configuration
        current = Mutex(configuration)
        self.tally = tally
        self.notifier = notifier
        self.trapsSignal = trapsSignal
        self.logger = logger
    }

    /// Registers a part to reload; hooks run in registration order.
    func register(_ hook: ReloadHook) {
        hooks.withLock { $0.append(hook) }
    }

    /// Returns once SIGHUP reloads rather than ends the process (at once when no signal is trapped).
    func waitUntilArmed() async throws {
        try await armed.value()
    }

    func run() async throws {
        guard trapsSignal else {
            armed.finish(.success(()))
            try? await gracefulShutdown()
            return
        }
        let signals = await UnixSignalsSequence(trapping: .sighup)
        logger.info("configuration reload armed (SIGHUP)")
        armed.finish(.success(()))
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload()
        }
    }

    /// One reload: read, prepare every hook, then apply all of them.
    func reload() async {
        notifier.reloading()
        defer { notifier.ready() }
        logger.info("reloading configuration")
        let configuration: DaemonConfiguration
        do {
            configuration = try await current.withLock { $0 }.reloaded()
        } catch {
            return reject(error)
        }
        var changes: [ReloadHook.Apply] = []
        for hook in hooks.withLock({ $0 }) {
            do {
                changes.append(try await hook.prepare(configuration))
            } catch {
                return reject(error, part: hook.name)
            }
        }
        for change in changes { await change() }
        current.withLock { $0 = configuration }
        let pending = started.restartOnlyChanges(in: configuration)
        announceRestartOnly(pending, in: configuration)
        tally.recordReload(applied: true, pendingRestart: pending)
        var metadata: Logger.Metadata = [:]
        if !pending.isEmpty { metadata["pending_restart"] = "\(pending.joined(separator: ","))" }
        logger.info("configuration reloaded", metadata: metadata)
    }

    /// "state_dir changed; takes effect after restart", once per new value.
    private func announceRestartOnly(_ pending: [String], in configuration: DaemonConfiguration) {
        let values = configuration.restartOnlyValues
        let fresh = announced.withLock { announced in
            let fresh = pending.filter { announced[$0] != values[$0] }
            announced = Dictionary(uniqueKeysWithValues: pending.map { ($0, values[$0] ?? "") })
            return fresh
        }
        for key in fresh {
            logger.notice("\(key) changed; takes effect after restart", metadata: ["value": "\(values[key] ?? "")"])
        }
    }

    private func reject(_ error: any Error, part: String? = nil) {
        tally.recordReload(applied: false)
        var metadata: Logger.Metadata = ["reason": "\(error)"]
        if let part { metadata["part"] = "\(part)" }
        logger.error("configuration reload rejected; keeping the current configuration", metadata: metadata)
    }
}
