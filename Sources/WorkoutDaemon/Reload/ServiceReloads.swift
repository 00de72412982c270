import DeviceDiscovery
import Replication
import ShareDelivery
import WorkoutEngine
import WorkoutStorage

extension ReloadHook {
    /// `log_level`: every logger, including those made before the reload, logs at the new level.
    static func logLevel(_ setting: DaemonLogLevel) -> ReloadHook {
        ReloadHook(name: "log_level") { configuration in
            { setting.level = configuration.logLevel }
        }
    }

    /// `shares.*`: deliveries that start after the reload use the new sinks. Spool files stay in the state
    /// directory the daemon started with, like the database.
    static func shareSinks(_ delivery: ShareDeliveryService, stateDirectory: String) -> ReloadHook {
        ReloadHook(name: "shares") { configuration in
            let sinks = configuration.shares.sinks.makeSinks(stateDirectory: stateDirectory)
            return { delivery.replaceSinks(sinks) }
        }
    }

    /// `discovery.*`, `serial.baud`: devices that appear or change after the reload use the new settings.
    ///
    /// They are matched against the new rules and opened at the new rate; devices already served stay connected.
    /// `discovery.enabled: false` stops the monitor and releases the devices discovery attached; `true` starts it and
    /// serves what matches.
    static func discoveryRules(_ discovery: DiscoveryService) -> ReloadHook {
        ReloadHook(name: "discovery") { configuration in
            { discovery.update(matcher: configuration.discovery, baud: configuration.serial.baud) }
        }
    }

    /// `replication.password_file` or `password_credential`: read again and used from the next connection. The server and hub id
    /// need a restart (a hub that changed its name mid-history would split it): the restart-only report names
    /// them, and until then the running server keeps its password too.
    static func replicationPassword(_ shipper: ReplicationShipper, current: ReplicationConfiguration) -> ReloadHook {
        ReloadHook(name: "replication") { configuration in
            guard let replication = configuration.replication,
                replication.redactedDescription == current.redactedDescription, replication.hubID == current.hubID
            else {
                return {}
            }
            let password: String?
            do throws(ReplicationConfigurationError) { password = try replication.readPassword() } catch {
                throw ConfigurationError(key: error.key ?? "replication.password_file", problem: "\(error)")
            }
            return { shipper.updatePassword(password) }
        }
    }
}

extension ReloadHook {
    /// `limits.*` and `storage.max_database_bytes` apply from every device's next batch and commit.
    ///
    /// Every device's next batch runs under the new limits (its tokens capped at a lower burst, never refilled by a
    /// reload), the next sweep uses the new idle timeout, and the next commit compares the database with the new
    /// budget.
    static func limits(_ engine: WorkoutEngine, eviction: SessionEviction, store: SQLiteWorkoutStore?) -> ReloadHook {
        ReloadHook(name: "limits") { configuration in
            {
                engine.update(limits: configuration.limits)
                eviction.update(timeout: configuration.limits.sessionIdleTimeout)
                store?.update(maximumDatabaseBytes: configuration.storage.maximumDatabaseBytes)
            }
        }
    }
}
