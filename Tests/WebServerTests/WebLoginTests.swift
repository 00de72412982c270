import Foundation
import HTTPTypes
import NIOHTTP1
import OpenAPIRuntime
import Testing
import WebAPI
import WorkoutdTesting

/// On an address other than loopback nothing is served without a login.
///
/// The token from the credentials file (a form giving a session cookie, or a bearer header); failed logins are
/// throttled.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebLoginTests {
    static let token = "correct-horse-battery-staple-42"

    /// A daemon listening on every address, with the token in a 0600 file.
    static func daemon() throws -> WebDaemon {
        try WebDaemon(web: "  listen: 0.0.0.0:0\n  token_file: \(try tokenFile())\n")
    }

    /// A 0600 file holding `token`.
    static func tokenFile(_ token: String = token) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "web-token-\(UUID().uuidString.prefix(8))"
        ).path
        try (token + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        return file
    }

    @Test func nothingIsServedWithoutALogin() async throws {
        let web = try Self.daemon()
        for path in ["/api/status", "/api/devices", "/api/workouts", "/api/shares", "/api/events", "/metrics"] {
            let reply = try await RawHTTP.send(.GET, web.baseURL + path)
            #expect(reply.status == 401, "\(path)")
            #expect(reply.body.contains(#""code":"unauthorized""#), "\(path)")
        }
        let page = try await RawHTTP.send(.GET, web.baseURL + "/")
        #expect(page.status == 303)
        #expect(page.header("Location") == "/login")
        let form = try await RawHTTP.send(.GET, web.baseURL + "/login")
        #expect(form.status == 200)
        #expect(form.body.contains(#"name="token""#))
        let status = try await web.client().getStatus()
        guard case .default(let code, _) = status else {
            Issue.record("status without login: \(status)")
            return
        }
        #expect(code == 401)
    }

    @Test func theTokenGivesASessionAndTheBearerHeaderWorks() async throws {
        let web = try Self.daemon()
        let wrong = try await RawHTTP.send(
            .POST,
            web.baseURL + "/login",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "token=guess"
        )
        #expect(wrong.status == 401)
        #expect(wrong.header("Set-Cookie") == nil)

        let right = try await RawHTTP.send(
            .POST,
            web.baseURL + "/login",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "token=\(Self.token)"
        )
        #expect(right.status == 303)
        let cookie = try #require(right.header("Set-Cookie"))
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("SameSite=Strict"))
        #expect(cookie.contains("Max-Age="))
        let session = try #require(cookie.split(separator: ";").first.map(String.init))

        let withCookie = try web.client(middlewares: [HeaderMiddleware(name: .cookie, value: session)])
        #expect(try await withCookie.getStatus().ok.body.json.pid > 0)
        let page = try await RawHTTP.send(.GET, web.baseURL + "/", headers: [("Cookie", session)])
        #expect(page.status == 200)

        let withBearer = try web.client(middlewares: [
            HeaderMiddleware(name: .authorization, value: "Bearer \(Self.token)")
        ])
        #expect(try await withBearer.getDevices().ok.body.json.devices.isEmpty)
        let badBearer = try await RawHTTP.send(
            .GET,
            web.baseURL + "/api/status",
            headers: [("Authorization", "Bearer \(Self.token)x")]
        )
        #expect(badBearer.status == 401)
        let forged = try await RawHTTP.send(
            .GET,
            web.baseURL + "/api/status",
            headers: [("Cookie", "workoutd_session=0123456789abcdef")]
        )
        #expect(forged.status == 401)
    }

    @Test func failedLoginsAreThrottled() async throws {
        let web = try Self.daemon()
        func login(_ token: String) async throws -> RawHTTP.Reply {
            try await RawHTTP.send(
                .POST,
                web.baseURL + "/login",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: "token=\(token)"
            )
        }
        for attempt in 1...5 {
            #expect(try await login("wrong-\(attempt)").status == 401)
        }
        let refused = try await login("wrong-6")
        #expect(refused.status == 429)
        #expect(Int(refused.header("Retry-After") ?? "") ?? 0 > 0)
        // Locked out means locked out: even the right token waits.
        #expect(try await login(Self.token).status == 429)
    }

    @Test func theTokenComesFromASystemdCredential() async throws {
        // What LoadCredential=web-token:… gives the daemon: a private directory named by $CREDENTIALS_DIRECTORY.
        let credentials = FileManager.default.temporaryDirectory.appendingPathComponent(
            "web-credentials-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: credentials) }
        try (Self.token + "\n").write(toFile: credentials + "/web-token", atomically: true, encoding: .utf8)
        let web = try WebDaemon(
            web: "  listen: 0.0.0.0:0\n  token_credential: web-token\n",
            environment: ["CREDENTIALS_DIRECTORY": credentials]
        )
        #expect(try await RawHTTP.send(.GET, web.baseURL + "/api/status").status == 401)
        #expect(
            try await RawHTTP.send(
                .GET,
                web.baseURL + "/api/status",
                headers: [("Authorization", "Bearer \(Self.token)")]
            ).status == 200
        )
        #expect(!web.daemon.log.contains(Self.token))
    }

    @Test func aNetworkAddressWithoutATokenIsRefusedAtStart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "web-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("workoutd.yaml").path
        try WebDaemon.configuration("  listen: 0.0.0.0:8470\n").write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            arguments: [
                "--config", config, "--control-socket", "none", "--state-dir",
                directory.appendingPathComponent("state").path,
            ],
            unsetting: ["WORKOUTD_WEB_LISTEN"]
        )
        #expect(try daemon.waitForExit() == 78)
        #expect(daemon.log.contains("web.listen"))
        #expect(daemon.log.contains("token"))
    }
}
