import Foundation
import NIOHTTP1
import Testing
import WorkoutdTesting

/// `web.listen` is a live key: a reload turns the server on, moves it and turns it off.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebReloadTests {
    @Test func reloadTurnsTheServerOnMovesItAndTurnsItOff() async throws {
        let web = try WebDaemon(web: "  listen: off\n", expectListening: false)
        try web.daemon.waitForLog("web server off")

        try web.reload(web: "  listen: 127.0.0.1:0\n")
        let first = try web.listeningPort(occurrence: 1)
        #expect(try await RawHTTP.send(.GET, "http://127.0.0.1:\(first)/api/status").status == 200)

        try web.reload(web: "  listen: 127.0.0.1:0\n  tls_certificate: \"\"\n")
        // The same address: nothing to do, the listener stays.
        #expect(try await RawHTTP.send(.GET, "http://127.0.0.1:\(first)/api/status").status == 200)

        try web.reload(web: "  listen: localhost:0\n")
        let second = try web.listeningPort(occurrence: 2)
        #expect(try await RawHTTP.send(.GET, "http://127.0.0.1:\(second)/api/status").status == 200)
        if second != first {
            await #expect(throws: (any Error).self) {
                try await RawHTTP.send(.GET, "http://127.0.0.1:\(first)/api/status")
            }
        }

        try web.reload(web: "  listen: off\n")
        try waitUntil { web.daemon.log.components(separatedBy: "web server off").count > 2 }
        await #expect(throws: (any Error).self) {
            try await RawHTTP.send(.GET, "http://127.0.0.1:\(second)/api/status")
        }
    }

    private func waitUntil(_ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestingError("condition not met within 30 s") }
            usleep(20_000)
        }
    }
}

/// A port another program holds.
///
/// The daemon serves its devices anyway, says so, and a reload tries again.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebPortTakenTests {
    @Test func aTakenPortIsLoggedAndAReloadTriesAgain() async throws {
        let holder = try WebDaemon()
        let port = try #require(holder.port)
        let web = try WebDaemon(web: "  listen: 127.0.0.1:\(port)\n", expectListening: false)
        try web.daemon.waitForLog("web server unavailable")
        #expect(try web.ctlJSON(["status"], as: ControlStatusProbe.self).first?.pid != nil)
        holder.daemon.stop()
        try web.reload(web: "  listen: 127.0.0.1:\(port)\n")
        #expect(try web.listeningPort(occurrence: 1) == port)
    }
}

private struct ControlStatusProbe: Decodable { var pid: Int32 }
