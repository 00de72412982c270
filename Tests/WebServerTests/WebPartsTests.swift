import Testing

@testable import WebServer

/// The web server's parts without I/O.
///
/// The login throttle, sessions, constant-time comparison, escaping, SSE framing.
@Suite struct WebPartsTests {
    @Test func theThrottleLocksAClientOutAfterItsAttemptsAndLetsItBackLater() {
        var throttle = LoginThrottle(attempts: 3, lockout: .seconds(60))
        let start = ContinuousClock.now
        for _ in 0..<2 { throttle.recordFailure("10.0.0.9", now: start) }
        #expect(throttle.check("10.0.0.9", now: start) == .allowed)
        throttle.recordFailure("10.0.0.9", now: start)
        #expect(throttle.check("10.0.0.9", now: start + .seconds(1)) == .refused(retryAfter: .seconds(59)))
        #expect(throttle.check("10.0.0.7", now: start + .seconds(1)) == .allowed)
        #expect(throttle.check("10.0.0.9", now: start + .seconds(60)) == .allowed)
        // After the lockout the count starts again: one more failure is not a new lockout.
        throttle.recordFailure("10.0.0.9", now: start + .seconds(61))
        #expect(throttle.check("10.0.0.9", now: start + .seconds(61)) == .allowed)
    }

    @Test func theThrottleRemembersABoundedNumberOfClients() {
        var throttle = LoginThrottle(attempts: 1, lockout: .seconds(60), capacity: 2)
        let now = ContinuousClock.now
        throttle.recordFailure("a", now: now)
        throttle.recordFailure("b", now: now + .seconds(1))
        throttle.recordFailure("c", now: now + .seconds(2))
        #expect(throttle.check("a", now: now + .seconds(3)) == .allowed)
        #expect(throttle.check("c", now: now + .seconds(3)) != .allowed)
    }

    @Test func sessionsExpire() {
        let sessions = WebSessions(lifetime: .seconds(60), capacity: 2)
        let now = ContinuousClock.now
        let id = sessions.create(now: now)
        #expect(id.count == 64)
        #expect(sessions.isValid(id, now: now + .seconds(59)))
        #expect(!sessions.isValid(id, now: now + .seconds(60)))
        #expect(!sessions.isValid(id, now: now))
        let a = sessions.create(now: now)
        let b = sessions.create(now: now + .seconds(1))
        let c = sessions.create(now: now + .seconds(2))
        #expect(!sessions.isValid(a, now: now + .seconds(3)))
        #expect(sessions.isValid(b, now: now + .seconds(3)) && sessions.isValid(c, now: now + .seconds(3)))
    }

    @Test func tokensMatchExactly() {
        let token = WebToken("0123456789abcdef")
        #expect(token.matches(Array("0123456789abcdef".utf8)))
        #expect(!token.matches(Array("0123456789abcdeF".utf8)))
        #expect(!token.matches(Array("0123456789abcde".utf8)))
        #expect(!token.matches(Array("0123456789abcdef0".utf8)))
        #expect(!token.matches([UInt8]()))
        #expect("\(token)" == "***")
        #expect(!ConstantTime.equal(Array(repeating: 0, count: 256), []))
    }

    @Test func deviceTextCannotBecomeMarkup() {
        #expect(
            HTMLText.escaped(#"<img src=x onerror="alert(1)">"#) == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
        )
        #expect(HTMLText.escaped("Gary's & Co") == "Gary&#39;s &amp; Co")
        #expect(HTMLText.escaped("a\u{202E}b\nc") == #"a\u{202e}b\nc"#)
    }

    @Test func eventLinesBecomeOneServerSentEventEach() {
        let lines = Array("{\"event\":{\"seq\":1}}\n{\"event\":{\"seq\":2}}\n".utf8)
        #expect(
            String(decoding: EventStreams.serverSentEvents(lines), as: UTF8.self)
                == "data: {\"event\":{\"seq\":1}}\n\ndata: {\"event\":{\"seq\":2}}\n\n"
        )
    }
}
