import Foundation
import Replication
import WebServer

/// `fleet.*`: the fleet page's listener and where its database password comes from.
///
/// The listener's keys are the hub page's, under `fleet.`.
struct FleetSettings: Sendable {
    /// `fleet.listen`'s default: loopback, beside the hub page's 8470, so one machine may run both.
    static let defaultListen = ListenAddress(host: "127.0.0.1", port: 8471)

    var web: WebConfiguration = Self.defaults
    /// `fleet.password_file`: the database role's password, in a file only its owner may read.
    var passwordFile: String?
    /// `fleet.password_credential`: the same as a systemd credential (`LoadCredential=`).
    var passwordCredential: String?

    static var defaults: WebConfiguration {
        var web = WebConfiguration()
        web.listen = defaultListen
        web.section = "fleet"
        web.serviceName = "fleet page"
        web.title = "workoutd fleet"
        return web
    }
}

extension DaemonConfiguration {
    static func readFleet(_ reader: ConfigurationReader) throws -> FleetSettings {
        var fleet = FleetSettings()
        fleet.web = try readWeb(reader, section: "fleet", base: FleetSettings.defaults)
        fleet.passwordFile = try reader.path("fleet.password_file").flatMap { $0.isEmpty ? nil : $0 }
        fleet.passwordCredential = try reader.string("fleet.password_credential").flatMap { $0.isEmpty ? nil : $0 }
        if fleet.passwordFile != nil, fleet.passwordCredential != nil {
            throw ConfigurationError(
                key: "fleet.password_credential",
                problem: "and fleet.password_file are both set; keep one"
            )
        }
        return fleet
    }
}
