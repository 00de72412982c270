import Foundation
import Testing
import WorkoutdTesting

/// `/api/events` against abuse.
///
/// Streams opened and dropped by the thousand on an idle hub leave nothing behind (subscribers and memory back where
/// they were within one heartbeat period), streams are capped per address and in total, a heartbeat flows with no
/// device event, and a session's streams end with it.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebStreamAbuseTests {
    /// One stream's life as an abandoning client lives it: the request, the `: ready` line, then gone.
    /// Returns the status the server answered.
    static func openAndDrop(_ web: WebDaemon, from source: String, headers: [String] = []) throws -> Int {
        let connection = try TCPConnection(to: web.host, port: web.port ?? 0, from: source)
        defer { connection.close() }
        try connection.get("/api/events", host: web.hostHeader, headers: headers)
        let status = try connection.status()
        if status == 200 { _ = try connection.read(until: ": ready\n\n") }
        return status
    }

    static func waitUntil(
        within timeout: Duration,
        _ condition: () throws -> Bool
    ) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    @Test func threeThousandAbandonedStreamsLeaveMemoryWhereItWas() throws {
        let web = try WebDaemon()
        // A hub whose page was opened once: the code of the HTTP path is resident, as on any hub in use.
        for _ in 0..<20 { _ = try Self.openAndDrop(web, from: "127.0.0.1") }
        #expect(try Self.waitUntil(within: .seconds(15)) { try web.eventSubscribers() == 0 })
        sleep(3)
        let before = web.residentBytes

        // Four addresses, eight clients each (the per-address cap), 2,976 streams in all: opened, read up to
        // `: ready`, and dropped without a word, as fast as the hub answers.
        let opened = Counter()
        let refused = Counter()
        let peak = Counter()
        let done = Counter()
        let started = ContinuousClock.now
        try ClientThreads.run(33) { index in
            guard index < 32 else {
                while done.count < 32 {
                    peak.raise(to: web.residentBytes)
                    usleep(50_000)
                }
                return
            }
            defer { done.add() }
            for _ in 0..<93 {
                let status = try Self.openAndDrop(web, from: "127.0.0.\(2 + index / 8)")
                if status == 200 { opened.add() } else { refused.add() }
            }
        }
        let burst = ContinuousClock.now - started
        // A heartbeat period after the burst at most: every stream is closed and its memory given back.
        var after = 0
        let settled = try Self.waitUntil(within: .seconds(15)) {
            after = web.residentBytes
            return try web.eventSubscribers() == 0 && after <= before + 4 << 20
        }
        let mib = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        print(
            "abandoned streams: \(opened.count) opened and dropped, \(refused.count) refused, in \(burst);"
                + " resident before \(mib(before)), peak \(mib(peak.count)), after \(mib(after))"
        )
        #expect(opened.count + refused.count == 2976)
        let subscribers = try web.eventSubscribers()
        #expect(settled, "subscribers \(subscribers); resident \(mib(before)) before, \(mib(after)) after")
    }

    @Test func streamsAreCappedPerAddressAndInTotal() async throws {
        let web = try WebDaemon()
        let port = web.port ?? 0
        var open: [TCPConnection] = []
        func stream(from source: String) throws -> (TCPConnection, Int) {
            let connection = try TCPConnection(to: web.host, port: port, from: source)
            try connection.get("/api/events", host: "127.0.0.1:\(port)")
            let status = try connection.status()
            if status == 200 { _ = try connection.read(until: ": ready\n\n") }
            return (connection, status)
        }
        for _ in 0..<8 {
            let (connection, status) = try stream(from: "127.0.0.2")
            #expect(status == 200)
            open.append(connection)
        }
        let (ninth, status) = try stream(from: "127.0.0.2")
        #expect(status == 429, "a ninth stream from one address")
        ninth.close()
        for source in ["127.0.0.3", "127.0.0.4", "127.0.0.5"] {
            for _ in 0..<8 {
                let (connection, status) = try stream(from: source)
                #expect(status == 200)
                open.append(connection)
            }
        }
        #expect(try web.eventSubscribers() == 32)
        let (beyond, total) = try stream(from: "127.0.0.6")
        #expect(total == 503, "a stream beyond the total")
        beyond.close()
        for connection in open { connection.close() }
        #expect(try Self.waitUntil(within: .seconds(5)) { try web.eventSubscribers() == 0 })
        let (again, reopened) = try stream(from: "127.0.0.2")
        #expect(reopened == 200, "an address whose streams ended may open one again")
        again.close()
    }

    @Test func aHeartbeatFlowsWithoutDeviceEvents() async throws {
        let web = try WebDaemon()
        let connection = try TCPConnection(to: web.host, port: web.port ?? 0)
        try connection.get("/api/events", host: "127.0.0.1:\(web.port ?? 0)")
        #expect(try connection.status() == 200)
        _ = try connection.read(until: ": ready\n\n")
        // At least every 15 s: one arrives well within 20 (read throws if it does not).
        let heartbeat = try connection.read(until: ": heartbeat\n\n", timeout: .seconds(20))
        #expect(!heartbeat.contains("data:"), "an event came first: \(heartbeat)")
    }

    @Test func loggingOutAndExpiryEndTheSessionsStreams() async throws {
        let file = try WebLoginTests.tokenFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let web = try WebDaemon(web: "  listen: 0.0.0.0:0\n  token_file: \(file)\n  session_lifetime_s: 4\n")
        let port = web.port ?? 0

        func login() async throws -> String {
            let reply = try await RawHTTP.send(
                .POST,
                web.baseURL + "/login",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: "token=\(WebLoginTests.token)"
            )
            return try #require(reply.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        }
        func stream(_ cookie: String) throws -> TCPConnection {
            let connection = try TCPConnection(to: "127.0.0.1", port: port)
            try connection.get("/api/events", host: "127.0.0.1:\(port)", headers: ["Cookie: \(cookie)"])
            #expect(try connection.status() == 200)
            _ = try connection.read(until: ": ready\n\n")
            return connection
        }

        // Logging out ends the stream at once.
        let cookie = try await login()
        let watched = try stream(cookie)
        let loggedOut = try await RawHTTP.send(.POST, web.baseURL + "/logout", headers: [("Cookie", cookie)])
        #expect(loggedOut.status == 303)
        #expect(watched.responseEnded(within: .seconds(2)), "the stream went on after logout")

        // Expiry too, at the session's end (4 s here), without any event.
        let expiring = try stream(try await login())
        #expect(expiring.responseEnded(within: .seconds(10)), "the stream went on after the session expired")
        #expect(try Self.waitUntil(within: .seconds(5)) { try web.eventSubscribers() == 0 })
    }
}
