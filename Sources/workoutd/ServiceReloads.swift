import DeviceDiscovery
import ShareDelivery

extension ReloadHook {
    /// `shares.*`: deliveries that start after the reload use the new sinks. Spool files stay in the state
    /// directory the daemon started with, like the database.
    static func shareSinks(_ delivery: ShareDeliveryService, stateDirectory: String) -> ReloadHook {
        ReloadHook(name: "shares") { configuration in
            let sinks = configuration.shareSinks.makeSinks(stateDirectory: stateDirectory)
            return { delivery.replaceSinks(sinks) }
        }
    }

    /// `discovery.match`: devices that appear or change after the reload are matched against the new rules;
    /// devices already served stay connected.
    static func discoveryRules(_ discovery: DiscoveryService) -> ReloadHook {
        ReloadHook(name: "discovery") { configuration in
            guard let matcher = configuration.discovery else {
                throw ConfigurationError(key: "discovery.enabled", problem: "cannot be turned off by a reload; restart workoutd to stop discovery")
            }
            return { discovery.update(matcher: matcher) }
        }
    }
}
