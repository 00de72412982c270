import Foundation
import Testing
import WorkoutdTesting

/// Connections on a LAN address (a network namespace of the test's own).
///
/// Idle or trickling connections from one address neither lock others out nor stay open, and a kept-alive connection
/// idles out.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebConnectionTests {
    @Test func idleConnectionsFromOneAddressLockNobodyOutAndAreClosed() throws {
        let namespace = try NetworkNamespace()
        let web = try WebDaemon.onLAN(namespace)
        let port = web.port ?? 0
        let other = namespace.outside(3)
        try namespace.addOutside(other)

        // 80 connections from one address that send nothing, and one that trickles its headers.
        var idle: [TCPConnection] = []
        for _ in 0..<80 { idle.append(try TCPConnection(to: namespace.inside, port: port, from: namespace.outside)) }
        let trickler = try TCPConnection(to: namespace.inside, port: port, from: other)
        try trickler.send("GET /login HTTP/1.1\r\nHo")

        // Another address is answered meanwhile.
        let visitor = try TCPConnection(to: namespace.inside, port: port, from: other)
        try visitor.get("/login", host: web.hostHeader, headers: ["Connection: close"])
        #expect(try visitor.status() == 200)

        // Within 30 s the hub has closed every one of them (the trickler sends a byte a second meanwhile).
        let deadline = ContinuousClock.now + .seconds(30)
        var trickling = true
        while trickling, ContinuousClock.now < deadline {
            trickling = (try? trickler.send("s")) != nil && !trickler.closedByPeer(within: .seconds(1))
        }
        #expect(!trickling, "the trickling connection is still open")
        let open = idle.filter { !$0.closedByPeer(within: max(.zero, deadline - .now)) }.count
        #expect(open == 0, "\(open) of 80 idle connections still open")
    }

    @Test func aKeptAliveConnectionIdlesOut() throws {
        let web = try WebDaemon()
        let connection = try TCPConnection(to: web.host, port: web.port ?? 0)
        try connection.get("/api/status", host: web.hostHeader)
        #expect(try connection.status() == 200)
        #expect(connection.closedByPeer(within: .seconds(30)), "a kept-alive connection stayed open")
    }
}
