import Foundation
import Synchronization
import Testing
import WorkoutdTesting

/// Guessing the token.
///
/// Every wrong token counts where it arrives (the login form or a bearer header), per address (an IPv6 /64 as one) and
/// across all addresses, parallel guesses count one by one, and a lockout stays however many other addresses try.
/// `check-config` refuses a token that is easy to guess.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebGuessingTests {
    /// `POST /login` with `token` from `source`.
    ///
    /// The status, or nil when the connection was refused or closed.
    static func login(_ web: WebDaemon, token: String, from source: String? = nil, hold: (() -> Void)? = nil) -> Int? {
        do {
            let connection = try TCPConnection(to: web.host, port: web.port ?? 0, from: source)
            let body = "token=\(token)"
            try connection.send(
                "POST /login HTTP/1.1\r\nHost: \(web.hostHeader)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
            )
            // The headers are in; the body follows when the caller says (every guess of a batch at once).
            hold?()
            try connection.send(body)
            return try connection.status()
        } catch {
            return nil
        }
    }

    /// `GET /api/status` with `Authorization: Bearer token` from `source`: the status, or nil.
    static func bearer(_ web: WebDaemon, token: String, from source: String? = nil) -> Int? {
        do {
            let connection = try TCPConnection(to: web.host, port: web.port ?? 0, from: source)
            try connection.send(
                "GET /api/status HTTP/1.1\r\nHost: \(web.hostHeader)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
            )
            return try connection.status()
        } catch {
            return nil
        }
    }

    @Test func wrongBearerTokensAreThrottledAsLoginsAre() throws {
        let web = try WebLoginTests.daemon()
        var statuses: [Int: Int] = [:]
        for attempt in 0..<2000 {
            statuses[Self.bearer(web, token: "guess-\(attempt)", from: "127.0.0.2") ?? 0, default: 0] += 1
        }
        #expect(statuses == [401: 5, 429: 1995], "\(statuses)")
        // The guessing address waits even with the right token; another address is let in.
        #expect(Self.bearer(web, token: WebLoginTests.token, from: "127.0.0.2") == 429)
        #expect(Self.bearer(web, token: WebLoginTests.token, from: "127.0.0.3") == 200)
        // And the login form of the guessing address is locked too: one throttle for both.
        #expect(Self.login(web, token: WebLoginTests.token, from: "127.0.0.2") == 429)
    }

    @Test func parallelGuessesCountOneByOne() throws {
        let web = try WebLoginTests.daemon()
        let ready = Counter()
        let statuses = Mutex<[Int?]>([])
        try ClientThreads.run(60) { index in
            let status = Self.login(web, token: "parallel-\(index)", from: "127.0.0.4") {
                ready.add()
                let deadline = ContinuousClock.now + .seconds(3)
                while ready.count < 60, ContinuousClock.now < deadline { usleep(1000) }
            }
            statuses.withLock { $0.append(status) }
        }
        let all = statuses.withLock { $0 }
        let judged = all.filter { $0 == 401 }.count
        #expect(judged <= 5, "\(judged) of 60 parallel guesses were judged: \(all)")
        #expect(!all.contains(303))
        #expect(all.contains(429))
    }

    @Test func churningThroughAddressesLiftsNoLockout() throws {
        let web = try WebLoginTests.daemon()
        for attempt in 0..<5 { #expect(Self.login(web, token: "wrong-\(attempt)", from: "127.0.0.2") == 401) }
        #expect(Self.login(web, token: WebLoginTests.token, from: "127.0.0.2") == 429)
        // 1,030 other addresses guess once each: after 50 wrong tokens in a minute, every address waits.
        var statuses: [Int: Int] = [:]
        for n in 0..<1030 {
            let source = "127.1.\(n / 250).\(1 + n % 250)"
            statuses[Self.login(web, token: "churn-\(n)", from: source) ?? 0, default: 0] += 1
        }
        #expect(statuses[401] == 45, "\(statuses)")
        #expect(statuses[429] == 985, "\(statuses)")
        #expect(Self.login(web, token: WebLoginTests.token, from: "127.0.0.2") == 429, "the lockout was lifted")
        #expect(Self.login(web, token: WebLoginTests.token, from: "127.0.0.3") == 429, "the global limit let one in")
    }

    @Test func anIPv6ClientCountsByItsSlash64() throws {
        let namespace = try NetworkNamespace()
        let web = try WebDaemon.onLAN(namespace, ipv6: true)
        let sameSlash64 = namespace.outside6.replacingOccurrences(of: "::2", with: "::3")
        let otherSlash64 = namespace.outside6.replacingOccurrences(of: "::2", with: ":1::2")
        try namespace.addOutside(sameSlash64)
        try namespace.addOutside(otherSlash64)
        for attempt in 0..<5 {
            #expect(Self.login(web, token: "wrong-\(attempt)", from: namespace.outside6) == 401)
        }
        #expect(Self.login(web, token: WebLoginTests.token, from: sameSlash64) == 429, "another address of the /64")
        #expect(Self.login(web, token: WebLoginTests.token, from: otherSlash64) == 303, "another /64")
    }

    @Test(arguments: [
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "one character repeated"),
        ("0123456789abcdef", "at most 64 bits"),
        ("abcabcabcabcabcabcabcabcabcabcabcabcabc", "at most 12 bits"),
        ("Tr0ub4dor&3", "at most 72 bits"),
    ])
    func checkConfigRefusesAWeakToken(token: String, problem: String) throws {
        let file = try WebLoginTests.tokenFile(token)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let check = try WebDaemon.checkConfig("  listen: 0.0.0.0:8470\n  token_file: \(file)\n")
        #expect(check.process.terminationStatus == 78)
        #expect(check.log.contains("web.token_file"), "\(check.log)")
        #expect(check.log.contains(problem), "\(check.log)")
        #expect(!check.log.contains(token))
    }

    @Test func checkConfigAcceptsARandomToken() throws {
        let file = try WebLoginTests.tokenFile(UUID().uuidString + UUID().uuidString)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let check = try WebDaemon.checkConfig("  listen: 0.0.0.0:8470\n  token_file: \(file)\n")
        #expect(check.process.terminationStatus == 0, "\(check.log)")
    }
}
