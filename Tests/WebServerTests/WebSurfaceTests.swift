import Foundation
import Testing
import WorkoutdTesting

/// The rest of the web surface.
///
/// Which `Host`s are answered (DNS rebinding), malformed parameters, posts from other sites, what the login page may
/// load, and what the daemon says at start.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebSurfaceTests {
    static func status(_ web: WebDaemon, _ path: String, host: String?, headers: [String] = []) throws -> Int {
        let connection = try TCPConnection(to: web.host, port: web.port ?? 0)
        let hostLine = host.map { "Host: \($0)\r\n" } ?? ""
        try connection.send(
            "GET \(path) HTTP/1.1\r\n\(hostLine)" + headers.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n"
        )
        return try connection.status()
    }

    @Test func onLoopbackOnlyHostsThatNameTheServerAreAnswered() throws {
        let web = try WebDaemon(web: "  listen: 127.0.0.1:0\n  server_names: [hub.gym.lan]\n")
        let port = web.port ?? 0
        #expect(try Self.status(web, "/api/status", host: "127.0.0.1:\(port)") == 200)
        #expect(try Self.status(web, "/api/status", host: "localhost:\(port)") == 200)
        #expect(try Self.status(web, "/api/status", host: "LOCALHOST") == 200)
        #expect(try Self.status(web, "/api/status", host: "hub.gym.lan:\(port)") == 200)
        // A page of another site whose name was made to resolve to 127.0.0.1 (DNS rebinding) reads nothing.
        for host in ["rebind.example:\(port)", "127.0.0.2:\(port)", "hub.gym.lan.evil.example", "[::1]:\(port)"] {
            #expect(try Self.status(web, "/api/status", host: host) == 421, "\(host)")
            #expect(try Self.status(web, "/", host: host) == 421, "\(host)")
        }
        #expect(try Self.status(web, "/api/status", host: nil) == 400)
    }

    @Test func onALANAddressTheAddressIsTheName() throws {
        let namespace = try NetworkNamespace()
        let web = try WebDaemon.onLAN(namespace)
        #expect(try Self.status(web, "/api/status", host: web.hostHeader) == 401)
        #expect(try Self.status(web, "/login", host: web.hostHeader) == 200)
        for host in ["localhost", "rebind.example", "127.0.0.1"] {
            #expect(try Self.status(web, "/login", host: host) == 421, "\(host)")
        }
        // Without TLS the token crosses the LAN in clear: the log says so at start.
        #expect(web.daemon.log.contains("without TLS"), "\(web.daemon.log)")
    }

    @Test(arguments: [
        ("/api/workouts?limit=abc", "limit"), ("/api/workouts?since=garbage", "since"),
        ("/api/workouts?until=2026-13-45", "until"), ("/api/workouts?before=x", "before"),
        ("/api/workouts?active=maybe", "active"), ("/api/shares?limit=1.5", "limit"),
        ("/api/workouts.csv?since=yesterday", "since"),
    ])
    func aMalformedParameterIsABadRequestNamingIt(path: String, parameter: String) async throws {
        let web = try WebDaemon()
        let reply = try await RawHTTP.send(.GET, web.baseURL + path)
        #expect(reply.status == 400, "\(path): \(reply.body)")
        #expect(reply.body.contains(#""code":"bad_request""#), "\(path): \(reply.body)")
        #expect(reply.body.contains("'\(parameter)'"), "\(path): \(reply.body)")
    }

    @Test func loginAndLogoutFromAnotherSiteAreRefused() async throws {
        let web = try WebLoginTests.daemon()
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        for headers in [
            [("Origin", "http://evil.example")], [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")],
            [("Origin", "null")], [("Origin", "http://127.0.0.1:1")],
        ] {
            let login = try await RawHTTP.send(
                .POST,
                web.baseURL + "/login",
                headers: form + headers,
                body: "token=\(WebLoginTests.token)"
            )
            #expect(login.status == 403, "\(headers)")
            #expect(login.header("Set-Cookie") == nil)
            let logout = try await RawHTTP.send(.POST, web.baseURL + "/logout", headers: headers)
            #expect(logout.status == 403, "\(headers)")
        }
        // The page's own form, as a browser sends it.
        let own = try await RawHTTP.send(
            .POST,
            web.baseURL + "/login",
            headers: form + [("Origin", web.baseURL), ("Sec-Fetch-Site", "same-origin")],
            body: "token=\(WebLoginTests.token)"
        )
        #expect(own.status == 303)
        let cookie = try #require(own.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let logout = try await RawHTTP.send(
            .POST,
            web.baseURL + "/logout",
            headers: [("Cookie", cookie), ("Origin", web.baseURL), ("Sec-Fetch-Site", "same-origin")]
        )
        #expect(logout.status == 303)
    }

    @Test func everythingTheLoginPageLoadsIsPublic() async throws {
        let web = try WebLoginTests.daemon()
        let page = try await RawHTTP.send(.GET, web.baseURL + "/login")
        #expect(page.status == 200)
        let loaded = page.body.matches(of: /(?:href|src)="(\/[^"]*)"/).map { String($0.output.1) }
        #expect(loaded.contains("/assets/style.css"))
        for path in loaded {
            #expect(try await RawHTTP.send(.GET, web.baseURL + path).status == 200, "\(path)")
        }
    }

    @Test func aTokenFileOthersCanReadIsRefusedNamingItsKey() throws {
        let file = try WebLoginTests.tokenFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        chmod(file, 0o644)
        let check = try WebDaemon.checkConfig("  listen: 0.0.0.0:8470\n  token_file: \(file)\n")
        #expect(check.process.terminationStatus == 78)
        #expect(check.log.contains("web.token_file"), "\(check.log)")
        #expect(check.log.contains("web.token_credential"), "\(check.log)")
        #expect(!check.log.contains("replication."), "\(check.log)")
    }
}
