import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// The replication link's security against a real PostgreSQL and the real daemon.
///
/// A server that cannot prove who it is gets no connection by default and no cleartext password on an
/// unverified link; secrets come from private files or systemd credentials.
@Suite("replication link security", .serialized)
struct ReplicationLinkSecurityTests {
    @Test func aSelfSignedServerIsRefusedByDefaultAndTrustedWithItsCertificate() throws {
        let cluster = try PostgresCluster()
        let certificate = try cluster.enableTLS()
        // No sslmode: verify-full against the system's CAs, which never signed this certificate.
        let url = "postgresql://workoutd@127.0.0.1:\(cluster.port)/gym"
        let hub = try ReplicationHub(hubID: "hub-tls", devices: 1, postgresURL: url, cluster: cluster)
        defer { hub.remove() }
        try hub.start()
        #expect(try hub.runLoad(cycles: 2).allSatisfy({ $0.isSuccess }), "devices are served whatever the server")
        let refused = try hub.waitForStatus(timeout: .seconds(60), "refusing the certificate") {
            $0["state"] as? String == "disconnected"
                && ($0["last_error"] as? String)?.contains("certificate verification failed") == true
        }
        #expect(refused["server_identity"] as? String == "verified", "\(refused)")
        #expect(refused["pending"] as? Int == 6)
        #expect(
            try cluster.count("SELECT count(*) FROM pg_tables WHERE tablename = 'workouts'") == 0,
            "not one statement reached the server"
        )
        let refusingLog = hub.daemon?.log ?? ""
        #expect(!refusingLog.contains("has sslmode="), "verify-full warns of nothing")
        hub.stop()

        // The same server, its certificate named as the CA to trust: the chain and the address (IP:127.0.0.1) check out.
        let original = try String(contentsOfFile: hub.configFile, encoding: .utf8)
        try original.replacingOccurrences(of: url, with: url + "?sslrootcert=\(certificate)")
            .write(toFile: hub.configFile, atomically: true, encoding: .utf8)
        try hub.start()
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        #expect(try cluster.count("SELECT count(*) FROM workouts WHERE hub_id = 'hub-tls'") == 2)
        #expect(
            try cluster.count(
                """
                SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'workoutd hub-tls' AND s.ssl
                """
            ) >= 1,
            "the hub's connections are TLS"
        )
        #expect(try hub.replicationStatus()["server_identity"] as? String == "verified")
        #expect(!(try hub.replicationStatusLine()).contains("unverified"))
    }

    @Test(arguments: ["disable", "require"])
    func aServerAskingForACleartextPasswordOnAnUnverifiedLinkGetsNone(sslmode: String) throws {
        let cluster = try PostgresCluster()
        try cluster.enableTLS()
        try cluster.setHostAuthentication("password")
        let hub = try ReplicationHub(
            hubID: "hub-cleartext",
            devices: 1,
            postgresURL: cluster.url(sslmode: sslmode),
            cluster: cluster
        )
        defer { hub.remove() }
        try hub.start()
        #expect(try hub.runLoad(cycles: 1).allSatisfy({ $0.isSuccess }))
        let status = try hub.waitForStatus(timeout: .seconds(60), "refusing the cleartext request") {
            $0["state"] as? String == "disconnected"
                && ($0["last_error"] as? String)?.contains("cleartext password") == true
        }
        let error = status["last_error"] as? String ?? ""
        #expect(
            error.contains("identity was not verified; refused (replication.allow_password_without_verified_server)"),
            "\(error)"
        )
        #expect(status["server_identity"] as? String == "unverified")
        let line = try hub.replicationStatusLine()
        #expect(line.contains("server identity unverified") && line.contains("cleartext password"), "\(line)")
        let log = hub.daemon?.log ?? ""
        #expect(log.contains(" warning replication.postgres_url has sslmode=\(sslmode)"), "a warning at start: \(log)")
        #expect(log.contains("cleartext password"), "the refusal is logged")
        // The server's side: the hub tried (and retried), yet never authenticated, rightly or wrongly.
        let serverLog = cluster.serverLog
        #expect(serverLog.contains("connection received: host=127.0.0.1"), "\(serverLog.suffix(2000))")
        #expect(!serverLog.contains("connection authorized: user=workoutd"), "\(serverLog.suffix(2000))")
        #expect(!serverLog.contains("password authentication failed"), "\(serverLog.suffix(2000))")
        #expect(try cluster.count("SELECT count(*) FROM pg_tables WHERE tablename = 'workouts'") == 0)
        hub.stop()

        // Allowed explicitly: the password goes, the hub connects and ships, and the log says what was allowed.
        try hub.appendToReplicationSection("  allow_password_without_verified_server: true\n")
        try hub.start()
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        #expect(cluster.serverLog.contains("connection authorized: user=workoutd"))
        let allowedLog = hub.daemon?.log ?? ""
        #expect(allowedLog.contains("replication.allow_password_without_verified_server is on"))
        #expect(!allowedLog.contains(PostgresCluster.password), "the password is never logged")
    }

    @Test func thePasswordComesFromASystemdCredential() throws {
        let cluster = try PostgresCluster()
        // No password_file: the daemon reads $CREDENTIALS_DIRECTORY/postgres-password, as under LoadCredential=.
        let hub = try ReplicationHub(
            hubID: "hub-credential",
            devices: 1,
            postgresURL: cluster.url(),
            passwordFile: "",
            cluster: cluster
        )
        defer { hub.remove() }
        let credentials = hub.directory + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try (PostgresCluster.password + "\n").write(
            toFile: credentials + "/postgres-password",
            atomically: true,
            encoding: .utf8
        )
        try hub.appendToReplicationSection("  password_credential: postgres-password\n")
        try hub.start(environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(try hub.runLoad(cycles: 1).allSatisfy({ $0.isSuccess }))
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        #expect(try cluster.count("SELECT count(*) FROM workouts WHERE hub_id = 'hub-credential'") == 1)
    }

    @Test func aUnixSocketNeedsNoSSLModeAndIsShownAsLocal() throws {
        let cluster = try PostgresCluster()
        // No sslmode: over a socket there is no network to verify anything across (and no TLS to have).
        let hub = try ReplicationHub(
            hubID: "hub-socket",
            devices: 1,
            postgresURL: "postgresql://workoutd@localhost/gym?host=\(cluster.directory)&port=\(cluster.port)",
            cluster: cluster
        )
        defer { hub.remove() }
        try hub.start()
        #expect(try hub.runLoad(cycles: 1).allSatisfy({ $0.isSuccess }))
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        #expect(try hub.replicationStatus()["server_identity"] as? String == "local")
        let log = hub.daemon?.log ?? ""
        #expect(!log.contains("has sslmode="), "nothing to warn of: \(log)")
    }

    @Test func aPasswordInTheURLOfAReadableFileIsWarnedOfAndNeverShown() throws {
        let cluster = try PostgresCluster()
        let url = "postgresql://workoutd:\(PostgresCluster.password)@127.0.0.1:\(cluster.port)/gym?sslmode=disable"
        let hub = try ReplicationHub(
            hubID: "hub-url-password",
            devices: 1,
            postgresURL: url,
            passwordFile: "",
            cluster: cluster
        )
        defer { hub.remove() }
        chmod(hub.configFile, 0o644)
        try hub.start()
        try hub.withDaemonLogOnFailure { try hub.waitUntilShipped() }
        let log = hub.daemon?.log ?? ""
        #expect(
            log.contains("replication.postgres_url holds a password and \(hub.configFile) is readable by others"),
            "\(log)"
        )
        #expect(!log.contains(PostgresCluster.password))
        #expect(
            try hub.replicationStatus()["server"] as? String
                == "postgresql://workoutd:***@127.0.0.1:\(cluster.port)/gym?sslmode=disable"
        )
    }
}

/// The replication link's configuration mistakes stop the start with exit 78 and the key to fix.
@Suite struct ReplicationConfigurationRefusalTests {
    /// `workoutd check-config` on a file with `replication` lines; its exit status and output.
    func checkConfig(
        _ replication: String,
        environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wd-check-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/workoutd.yaml"
        try "replication:\n  hub_id: hall\n\(replication.replacingOccurrences(of: "$DIR", with: directory))".write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        try "secret\n".write(toFile: directory + "/open-password", atomically: true, encoding: .utf8)
        chmod(directory + "/open-password", 0o644)
        try "secret\n".write(toFile: directory + "/private-password", atomically: true, encoding: .utf8)
        chmod(directory + "/private-password", 0o400)
        let process = try DaemonProcess(arguments: ["check-config", "--config", file], environment: environment)
        let status = try process.waitForExit()
        return (status, process.log)
    }

    @Test(arguments: ["prefer", "allow"]) func sslmodesThatFallBackToPlainAreRefused(sslmode: String) throws {
        let result = try checkConfig("  postgres_url: postgresql://workoutd@db.example/gym?sslmode=\(sslmode)\n")
        #expect(result.status == 78)
        #expect(
            result.output.contains("'replication.postgres_url': sslmode=\(sslmode) is refused as unsafe"),
            "\(result.output)"
        )
    }

    @Test func verifyCANeedsTheCAFileAndAnUnknownModeIsNamed() throws {
        let noCA = try checkConfig("  postgres_url: postgresql://workoutd@db.example/gym?sslmode=verify-ca\n")
        #expect(noCA.status == 78 && noCA.output.contains("sslmode=verify-ca needs sslrootcert="), "\(noCA.output)")
        let missingCA = try checkConfig(
            "  postgres_url: postgresql://workoutd@db.example/gym?sslrootcert=/nonexistent/ca.pem\n"
        )
        #expect(
            missingCA.status == 78 && missingCA.output.contains("sslrootcert /nonexistent/ca.pem cannot be loaded"),
            "\(missingCA.output)"
        )
        let unknown = try checkConfig("  postgres_url: postgresql://workoutd@db.example/gym?sslmode=verify\n")
        #expect(
            unknown.status == 78
                && unknown.output.contains("sslmode must be one of disable, require, verify-ca, verify-full"),
            "\(unknown.output)"
        )
        let fine = try checkConfig("  postgres_url: postgresql://workoutd@db.example/gym?sslmode=require\n")
        #expect(fine.status == 0, "\(fine.output)")
    }

    @Test func aPasswordFileOthersCanReadIsRefusedAndAPrivateOneIsRead() throws {
        let open = try checkConfig(
            "  postgres_url: postgresql://workoutd@db.example/gym\n  password_file: $DIR/open-password\n"
        )
        #expect(open.status == 78)
        #expect(
            open.output.contains("'replication.password_file':") && open.output.contains("open-password is mode 0644")
                && open.output.contains("it must be 0600 or 0400"),
            "\(open.output)"
        )
        let privateFile = try checkConfig(
            "  postgres_url: postgresql://workoutd@db.example/gym\n  password_file: $DIR/private-password\n"
        )
        #expect(privateFile.status == 0, "\(privateFile.output)")
    }

    @Test func aCredentialNeedsItsDirectory() throws {
        let missing = try checkConfig(
            "  postgres_url: postgresql://workoutd@db.example/gym\n  password_credential: postgres-password\n"
        )
        #expect(missing.status == 78)
        #expect(
            missing.output.contains("'replication.password_credential'")
                && missing.output.contains("$CREDENTIALS_DIRECTORY is not set"),
            "\(missing.output)"
        )
        let path = try checkConfig(
            "  postgres_url: postgresql://workoutd@db.example/gym\n  password_credential: ../etc/shadow\n"
        )
        #expect(path.status == 78 && path.output.contains("must be a credential name"), "\(path.output)")
    }

    @Test func aHostListIsAcceptedAndAnUnusableSessionAttributeIsNamed() throws {
        let list = try checkConfig(
            "  postgres_url: postgresql://workoutd@db1.example:5432,db2.example:5433/gym?sslmode=require\n"
        )
        #expect(list.status == 0, "\(list.output)")
        let keywords = try checkConfig(
            "  postgres_url: \"host=db1.example,db2.example port=5432,5433 dbname=gym user=workoutd sslmode=require\"\n"
        )
        #expect(keywords.status == 0, "\(keywords.output)")
        let readOnly = try checkConfig(
            "  postgres_url: postgresql://workoutd@db1.example,db2.example/gym?target_session_attrs=read-only\n"
        )
        #expect(
            readOnly.status == 78
                && readOnly.output.contains(
                    "'replication.postgres_url': target_session_attrs must be read-write or any; got 'read-only'"
                ),
            "\(readOnly.output)"
        )
    }
}
