import ControlPlane
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// A part of the daemon that can take a new configuration without a restart.
///
/// `prepare` checks the new configuration and returns the change to make; nothing is applied
/// unless every part prepared successfully, so a rejected reload leaves the old configuration whole.
struct ReloadHook: Sendable {
    typealias Apply = @Sendable () async -> Void

    var name: String
    var prepare: @Sendable (DaemonConfiguration) async throws -> Apply
}

/// Re-reads the configuration on SIGHUP (`systemctl reload workoutd`) and hands it to the registered hooks.
///
/// An invalid configuration is rejected with the reason logged; the one in force stays.
final class ConfigurationReloader: Service, Sendable {
    private let current: Mutex<DaemonConfiguration>
    private let hooks = Mutex<[ReloadHook]>([])
    private let tally: ActivityTally
    private let logger: Logger

    init(_ configuration: DaemonConfiguration, tally: ActivityTally, logger: Logger) {
        current = Mutex(configuration)
        self.tally = tally
        self.logger = logger
    }

    /// Registers a part to reload; hooks run in registration order.
    func register(_ hook: ReloadHook) {
        hooks.withLock { $0.append(hook) }
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        logger.info("configuration reload armed (SIGHUP)")
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload()
        }
    }

    /// One reload: read, prepare every hook, then apply all of them.
    func reload() async {
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
        tally.recordReload(applied: true)
        logger.info("configuration reloaded")
    }

    private func reject(_ error: any Error, part: String? = nil) {
        tally.recordReload(applied: false)
        var metadata: Logger.Metadata = ["reason": "\(error)"]
        if let part { metadata["part"] = "\(part)" }
        logger.error("configuration reload rejected; keeping the current configuration", metadata: metadata)
    }
}
