import DeviceDiscovery
import ShareDelivery

extension ReloadHook {
    /// `log_level`: every logger, including those made before the reload, logs at the new level.
    static let logLevel = ReloadHook(name: "log_level") { configuration in
        { DaemonLogHandler.configure(level: configuration.logLevel) }
    }

    /// `shares.*`: deliveries that start after the reload use the new sinks. Spool files stay in the state
    /// directory the daemon started with, like the database.
    static func shareSinks(_ delivery: ShareDeliveryService, stateDirectory: String) -> ReloadHook {
        ReloadHook(name: "shares") { configuration in
            let sinks = configuration.shareSinks.makeSinks(stateDirectory: stateDirectory)
            return { delivery.replaceSinks(sinks) }
        }
    }

    /// `discovery.match`, `serial.baud`: devices that appear or change after the reload are matched against the
    /// new rules and opened at the new rate;
    /// devices already served stay connected.
    static func discoveryRules(_ discovery: DiscoveryService) -> ReloadHook {
        ReloadHook(name: "discovery") { configuration in
            // `discovery.enabled: false` takes effect after a restart (the reload says so); until then the
            // rules in force stay.
            guard let matcher = configuration.discovery else { return {} }
            return { discovery.update(matcher: matcher, baud: configuration.baud) }
        }
    }
}
