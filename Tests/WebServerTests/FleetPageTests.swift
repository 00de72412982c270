import Foundation
import Logging
import NIOHTTP1
import Replication
import Testing
import WorkoutdTesting

/// `workoutd fleet` against a private PostgreSQL.
///
/// The central schema made by the hubs' own migration, hubs and workouts in it, and the fleet page reading them with
/// a role that may only SELECT.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts PostgreSQL and workoutd processes"))
struct FleetPageTests {
    static let rolePassword = "fleet-reader-secret"

    /// A cluster with the schema a hub makes, a SELECT-only role `fleet`, three hubs and four workouts.
    ///
    /// `hub-fresh` was seen now; `hub-quiet` 60 s ago with no interval stated (30 s: still online); `hub-gone` ten
    /// minutes ago at a 30 s interval, so it missed its heartbeats.
    final class Central: @unchecked Sendable {
        let cluster: PostgresCluster
        let directory: String

        init() async throws {
            cluster = try PostgresCluster()
            directory = cluster.directory
            // The schema as a hub makes it: the Replication module's own migration, over its own link.
            let passwordFile = try cluster.writePasswordFile(in: directory)
            let owner = try ReplicationConfiguration(url: cluster.url(), passwordFile: passwordFile, hubID: "schema")
            let logger = Logger(label: "fleet-test")
            let connection = try await owner.openCentralConnection(logger: logger)
            try await CentralSchemaVersion.migrate(connection, logger: logger)
            try await connection.close()
            try cluster.psql(
                """
                CREATE ROLE fleet LOGIN PASSWORD '\(FleetPageTests.rolePassword)';
                GRANT SELECT ON hubs, workouts, shares, workoutd_schema TO fleet;
                INSERT INTO hubs (hub_id, name, software_version, architecture, last_seen, heartbeat_interval_s,
                    wearables_connected, active_workouts, backlog)
                VALUES ('hub-fresh', 'Downtown <b>gym</b>', '1.4.0', 'aarch64', now(), 30, 12, 3, 7),
                    ('hub-quiet', NULL, '1.4.0', 'x86_64', now() - interval '60 seconds', NULL, 2, 0, 0),
                    ('hub-gone', 'Harbour', '1.3.9', 'aarch64', now() - interval '10 minutes', 30, 5, 1, 250);
                INSERT INTO workouts (hub_id, workout_id, device_id, location, intensity_level, date, started_at,
                    ended_at, duration_seconds)
                VALUES ('hub-fresh', 1, 'W-1', 'Treadmill', 4, now(), now() - interval '40 minutes',
                        now() - interval '10 minutes', 1800),
                    ('hub-fresh', 2, 'W-2', '=HYPERLINK("http://x")', 2, now(), now() - interval '5 minutes', NULL, NULL),
                    ('hub-gone', 1, 'W-9', 'Rower', 6, now(), now() - interval '3 days',
                        now() - interval '3 days' + interval '20 minutes', 1200),
                    ('hub-quiet', 7, 'W-3', 'Bike', 3, now(), now() - interval '1 minute', NULL, NULL);
                """
            )
        }

        /// The URL of the SELECT-only role, its password in `fleet.password_file`.
        var readerURL: String { cluster.url(user: "fleet") }

        deinit { try? cluster.stop(immediate: true) }
    }

    /// `workoutd fleet` as a process.
    ///
    /// `fleet` is the configuration's `fleet:` section, the password file added.
    final class FleetProcess: @unchecked Sendable {
        let process: DaemonProcess
        let configFile: String
        private(set) var port = 0

        init(
            central: Central,
            listen: String = "127.0.0.1:0",
            fleet: String = "",
            waitForListener: Bool = true
        )
            throws
        {
            let passwordFile = central.directory + "/fleet-password-\(UUID().uuidString.prefix(6))"
            try (FleetPageTests.rolePassword + "\n").write(toFile: passwordFile, atomically: true, encoding: .utf8)
            chmod(passwordFile, 0o600)
            configFile = central.directory + "/fleet-\(UUID().uuidString.prefix(6)).yaml"
            try "log_level: info\nfleet:\n  password_file: \(passwordFile)\n\(fleet)"
                .write(toFile: configFile, atomically: true, encoding: .utf8)
            process = try DaemonProcess(
                arguments: [
                    "fleet", "--postgres-url", central.readerURL, "--listen", listen, "--config", configFile,
                ]
            )
            if waitForListener { port = try listeningPort() }
        }

        private func listeningPort() throws -> Int {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if let line = process.log.split(separator: "\n").first(where: { $0.contains("fleet page listening") }),
                    let range = line.range(of: #"address=[^ ]*:(\d+)"#, options: .regularExpression),
                    let port = line[range].split(separator: ":").last.flatMap({ Int($0) })
                {
                    return port
                }
                guard process.process.isRunning else { break }
                usleep(20_000)
            }
            throw TestingError("the fleet page did not listen:\n\(process.log)")
        }

        var baseURL: String { "http://127.0.0.1:\(port)" }

        deinit { process.stop() }
    }

    static func json(_ body: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(body.utf8))
    }

    @Test func hubsAreListedAndAHubThatMissedThreeHeartbeatsIsOffline() async throws {
        let central = try await Central()
        let fleet = try FleetProcess(central: central)
        let reply = try await RawHTTP.send(.GET, fleet.baseURL + "/api/hubs")
        #expect(reply.status == 200, "\(reply.body)")
        #expect(reply.header("Content-Type") == "application/json")
        let hubs = try #require(try Self.json(reply.body) as? [[String: Any]], "\(reply.body)")
        let byID = Dictionary(
            uniqueKeysWithValues: hubs.compactMap { hub in (hub["hub_id"] as? String).map { ($0, hub) } }
        )
        #expect(Set(byID.keys) == ["hub-fresh", "hub-quiet", "hub-gone"])
        #expect(byID["hub-fresh"]?["online"] as? Bool == true)
        #expect(byID["hub-quiet"]?["online"] as? Bool == true)
        #expect(byID["hub-gone"]?["online"] as? Bool == false)
        #expect(byID["hub-fresh"]?["name"] as? String == "Downtown <b>gym</b>")
        #expect(byID["hub-fresh"]?["version"] as? String == "1.4.0")
        #expect(byID["hub-fresh"]?["wearables_connected"] as? Int == 12)
        #expect(byID["hub-gone"]?["backlog"] as? Int == 250)
        #expect(byID["hub-fresh"]?["workouts_today"] as? Int == 2 || byID["hub-fresh"]?["workouts_today"] as? Int == 1)
        #expect(byID["hub-quiet"]?["name"] is NSNull)
        // RFC 3339, as a client parses it.
        let lastSeen = try #require(byID["hub-gone"]?["last_seen"] as? String)
        let seen = try Date.ISO8601FormatStyle().parse(lastSeen)
        #expect(abs(seen.timeIntervalSinceNow + 600) < 120)

        let metrics = try await RawHTTP.send(.GET, fleet.baseURL + "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("workoutd_fleet_hubs 3"), "\(metrics.body)")
        #expect(metrics.body.contains("workoutd_fleet_hubs_online 2"), "\(metrics.body)")
        #expect(metrics.body.contains("workoutd_fleet_backlog 257"), "\(metrics.body)")
        #expect(metrics.body.contains(#"workoutd_fleet_hub_online{hub_id="hub-gone"} 0"#), "\(metrics.body)")

        let page = try await RawHTTP.send(.GET, fleet.baseURL + "/")
        #expect(page.status == 200)
        #expect(page.body.contains(#"data-hub="hub-gone" data-online="false""#))
        #expect(page.body.contains("Downtown &lt;b&gt;gym&lt;/b&gt;"))
        #expect(!page.body.contains("<b>gym</b>"))
        #expect(page.header("Content-Security-Policy") != nil)
        // Nothing was written: the role could not have, and the fleet page does not try.
        #expect(try central.cluster.count("SELECT count(*) FROM workoutd_schema") == CentralSchemaVersion.known)
    }

    @Test func workoutsAreFilteredByHubAndDateAndDownloadedAsCSV() async throws {
        let central = try await Central()
        let fleet = try FleetProcess(central: central)
        let all = try #require(
            try Self.json(try await RawHTTP.send(.GET, fleet.baseURL + "/api/workouts").body) as? [[String: Any]]
        )
        #expect(all.count == 4)
        let one = try #require(
            try Self.json(try await RawHTTP.send(.GET, fleet.baseURL + "/api/workouts?hub=hub-fresh").body)
                as? [[String: Any]]
        )
        #expect(Set(one.compactMap { $0["workout_id"] as? Int }) == [1, 2])
        #expect(one.allSatisfy { $0["hub_id"] as? String == "hub-fresh" })
        let since = Date().addingTimeInterval(-86_400).ISO8601Format()
        let recent = try #require(
            try Self.json(try await RawHTTP.send(.GET, fleet.baseURL + "/api/workouts?since=\(since)").body)
                as? [[String: Any]]
        )
        #expect(!recent.contains { $0["hub_id"] as? String == "hub-gone" })
        #expect(recent.count == 3)
        let limited = try #require(
            try Self.json(try await RawHTTP.send(.GET, fleet.baseURL + "/api/workouts?limit=1").body)
                as? [[String: Any]]
        )
        #expect(limited.count == 1)

        let csv = try await RawHTTP.send(.GET, fleet.baseURL + "/api/workouts.csv?hub=hub-fresh")
        #expect(csv.status == 200)
        #expect(csv.header("Content-Type")?.hasPrefix("text/csv") == true)
        let lines = csv.body.split(separator: "\r\n")
        #expect(
            lines.first
                == "hub_id,workout_id,device,location,intensity_level,started_at,ended_at,duration_seconds,wearable_date,clock_mark"
        )
        #expect(lines.count == 3)
        // A formula from a wearable is text in a spreadsheet.
        #expect(csv.body.contains(#"'=HYPERLINK(""http://x"")""#), "\(csv.body)")
    }

    @Test func aBadQueryParameterIsRefusedWithTheReason() async throws {
        let central = try await Central()
        let fleet = try FleetProcess(central: central)
        let cases: [(String, String)] = [
            ("/api/workouts?since=yesterday", "'since' must be a day"),
            ("/api/workouts?limit=0", "'limit' must be 1 to 1000"),
            ("/api/workouts?limit=99999", "'limit' must be 1 to 1000"),
            ("/api/workouts?hub=a&hub=b", "more than once"),
            ("/api/workouts?device=x", "Unknown query parameter 'device'"),
            ("/api/workouts?since=2026-11-29&until=2026-11-01", "'until' is before 'since'"),
            ("/api/workouts?until=2026-02-30", "'until' must be a day"),
            ("/api/hubs?x=1", "Unknown query parameter 'x'"),
        ]
        for (path, reason) in cases {
            let reply = try await RawHTTP.send(.GET, fleet.baseURL + path)
            #expect(reply.status == 400, "\(path)")
            #expect(reply.body.contains(#""code":"bad_request""#), "\(path): \(reply.body)")
            #expect(reply.body.contains(reason), "\(path): \(reply.body)")
        }
        let write = try await RawHTTP.send(.POST, fleet.baseURL + "/api/hubs", body: "{}")
        #expect(write.status == 405)
    }

    @Test func offLoopbackNothingIsServedWithoutTheToken() async throws {
        let central = try await Central()
        let token = try WebLoginTests.tokenFile()
        let fleet = try FleetProcess(central: central, listen: "0.0.0.0:0", fleet: "  token_file: \(token)\n")
        for path in ["/api/hubs", "/api/workouts", "/api/workouts.csv", "/metrics"] {
            let reply = try await RawHTTP.send(.GET, fleet.baseURL + path)
            #expect(reply.status == 401, "\(path)")
        }
        let page = try await RawHTTP.send(.GET, fleet.baseURL + "/")
        #expect(page.status == 303)
        #expect(page.header("Location") == "/login")
        let admitted = try await RawHTTP.send(
            .GET,
            fleet.baseURL + "/api/hubs",
            headers: [("Authorization", "Bearer \(WebLoginTests.token)")]
        )
        #expect(admitted.status == 200)

        // Without a token it does not start at all.
        let refused = try FleetProcess(central: central, listen: "0.0.0.0:0", waitForListener: false)
        #expect(try refused.process.waitForExit() == 78)
        #expect(refused.process.log.contains("fleet.token_file"), "\(refused.process.log)")
    }

    @Test func missingTablesAreNamedAndNothingIsCreated() async throws {
        let cluster = try PostgresCluster()
        defer { try? cluster.stop(immediate: true) }
        try cluster.psql("CREATE ROLE fleet LOGIN PASSWORD '\(Self.rolePassword)'")
        let passwordFile = cluster.directory + "/fleet-password"
        try (Self.rolePassword + "\n").write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        let configFile = cluster.directory + "/fleet.yaml"
        try "fleet:\n  password_file: \(passwordFile)\n".write(toFile: configFile, atomically: true, encoding: .utf8)
        let process = try DaemonProcess(
            arguments: [
                "fleet", "--postgres-url", cluster.url(user: "fleet"), "--listen", "127.0.0.1:0", "--config",
                configFile,
            ]
        )
        defer { process.stop() }
        #expect(try process.waitForExit() == 69)
        #expect(process.log.contains("the central tables are missing"), "\(process.log)")
        #expect(try cluster.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0)
    }
}
