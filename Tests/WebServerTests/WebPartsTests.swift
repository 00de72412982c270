import Foundation
import NIOCore
import Testing

@testable import ControlProtocol
@testable import WebServer

/// The web server's parts without I/O.
///
/// The login throttle, sessions, constant-time comparison, escaping, SSE framing.
@Suite struct WebPartsTests {
    @Test func theThrottleLocksAClientOutAfterItsAttemptsAndLetsItBackLater() {
        var throttle = LoginThrottle(attempts: 3, lockout: .seconds(60))
        let start = ContinuousClock.now
        let client = ClientAddress("10.0.0.9")
        for _ in 0..<3 { #expect(throttle.judge(client, correct: false, now: start) == .wrong) }
        #expect(throttle.judge(client, correct: true, now: start + .seconds(1)) == .refused(retryAfter: .seconds(59)))
        #expect(throttle.judge(ClientAddress("10.0.0.7"), correct: false, now: start + .seconds(1)) == .wrong)
        #expect(throttle.judge(client, correct: false, now: start + .seconds(60)) == .wrong)
        // After the lockout the count starts again: one more failure is not a new lockout.
        #expect(throttle.judge(client, correct: true, now: start + .seconds(61)) == .admitted)
    }

    @Test func aLockoutOutlastsAnyChurnOfAddresses() {
        var throttle = LoginThrottle(attempts: 1, lockout: .seconds(60), globalAttempts: 10_000, capacity: 2)
        let now = ContinuousClock.now
        #expect(throttle.judge(ClientAddress("a"), correct: false, now: now) == .wrong)
        // The table is full of one lockout and one quiet client: new clients push out the quiet one only.
        for n in 0..<1030 {
            _ = throttle.judge(ClientAddress("churn-\(n)"), correct: false, now: now + .milliseconds(n))
        }
        #expect(throttle.judge(ClientAddress("a"), correct: true, now: now + .seconds(30)) != .admitted)
        #expect(throttle.judge(ClientAddress("a"), correct: true, now: now + .seconds(61)) == .admitted)
    }

    @Test func failuresFromEveryAddressTogetherAreLimited() {
        var throttle = LoginThrottle(attempts: 5, lockout: .seconds(60), globalAttempts: 3)
        let now = ContinuousClock.now
        for n in 0..<3 { #expect(throttle.judge(ClientAddress("c\(n)"), correct: false, now: now) == .wrong) }
        #expect(
            throttle.judge(ClientAddress("fresh"), correct: true, now: now + .seconds(1))
                == .refused(retryAfter: .seconds(59))
        )
        #expect(throttle.judge(ClientAddress("fresh"), correct: true, now: now + .seconds(60)) == .admitted)
    }

    @Test func anIPv6ClientIsItsSlash64() throws {
        func client(_ text: String) throws -> ClientAddress {
            ClientAddress(try SocketAddress(ipAddress: text, port: 1))
        }
        #expect(try client("2001:db8:1:2::1") == client("2001:db8:1:2:ffff:1:2:3"))
        #expect(try client("2001:db8:1:2::1") != client("2001:db8:1:3::1"))
        #expect(try client("::ffff:192.0.2.7") == client("192.0.2.7"))
        #expect(try client("192.0.2.7") != client("192.0.2.8"))
        #expect(try client("2001:db8:1:2::1").description == "2001:db8:1:2::/64")
    }

    @Test func weakTokensAreToldApart() {
        #expect(TokenStrength.problem(with: String(repeating: "a", count: 16))?.contains("repeated") == true)
        #expect(TokenStrength.problem(with: "0123456789abcdef0123456789abcde") != nil)  // 124 bits of hex
        #expect(TokenStrength.problem(with: "3f9a1c0e7b2d4856a0c9e1f3b7d52a68") == nil)  // 128
        #expect(TokenStrength.problem(with: "0123456789abcdef0123456789abcdef") != nil)  // 16 digits twice
        #expect(TokenStrength.problem(with: "correct-horse-battery-staple-42") == nil)
        #expect(TokenStrength.problem(with: "xyzxyzxyzxyzxyzxyzxyzxyzxyzxyzxyzxyzxyz") != nil)
        #expect(TokenStrength.problem(with: String(repeating: "ab1", count: 200)) != nil)
    }

    @Test func hostsAreAnsweredOnlyWhenTheyNameTheServer() throws {
        let check = HostCheck(listen: ListenAddress(host: "0.0.0.0", port: 8470), serverNames: ["Hub.Gym.Lan."])
        let lan = try SocketAddress(ipAddress: "192.0.2.7", port: 8470)
        let loopback = try SocketAddress(ipAddress: "127.0.0.1", port: 8470)
        let mapped = try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 8470)
        #expect(check.verdict(host: "192.0.2.7:8470", local: lan) == .allowed)
        #expect(check.verdict(host: "192.0.2.7", local: mapped) == .allowed)
        #expect(check.verdict(host: "hub.gym.lan", local: lan) == .allowed)
        #expect(check.verdict(host: "localhost:8470", local: loopback) == .allowed)
        #expect(check.verdict(host: "localhost:8470", local: lan) == .misdirected)
        #expect(check.verdict(host: "evil.example", local: loopback) == .misdirected)
        #expect(check.verdict(host: "192.0.2.8", local: lan) == .misdirected)
        #expect(check.verdict(host: nil, local: lan) == .missing)
        #expect(check.verdict(host: "a:b:c", local: lan) == .missing)
    }

    @Test func anOriginIsComparedWithTheHostItNames() throws {
        let host = try #require(HostHeader("127.0.0.1:8470"))
        #expect(CrossSiteCheck.sameAuthority(origin: "http://127.0.0.1:8470", host: host))
        #expect(!CrossSiteCheck.sameAuthority(origin: "http://127.0.0.1:8471", host: host))
        #expect(!CrossSiteCheck.sameAuthority(origin: "https://evil.example", host: host))
        #expect(!CrossSiteCheck.sameAuthority(origin: "null", host: host))
        #expect(CrossSiteCheck.sameAuthority(origin: "https://hub", host: try #require(HostHeader("HUB:443"))))
        #expect(try #require(HostHeader("[::1]:80")).name == "::1")
    }

    @Test func csvFieldsAreQuotedAndNeutralised() {
        #expect(WorkoutCSV.field("Main hall") == "Main hall")
        #expect(WorkoutCSV.field("a,b") == #""a,b""#)
        #expect(WorkoutCSV.field(#"say "hi""#) == #""say ""hi""""#)
        #expect(WorkoutCSV.field("=1+1") == "'=1+1")
        #expect(WorkoutCSV.field("-5") == "'-5")
        #expect(WorkoutCSV.field("@x,y") == #""'@x,y""#)
        #expect(WorkoutCSV.field("\tx") == "'\tx")
        #expect(WorkoutCSV.field("line\nbreak") == "\"line\nbreak\"")
    }

    @Test func durationsAreSaidAsPeopleSayThem() {
        #expect(PageTime.spoken(seconds: 42.9) == "42 s")
        #expect(PageTime.spoken(seconds: 12 * 60 + 5) == "12 min")
        #expect(PageTime.spoken(seconds: 3600 + 2 * 60) == "1 h 02 min")
        let zone = TimeZone(identifier: "Europe/Berlin") ?? .gmt
        #expect(PageTime.format(Date(timeIntervalSince1970: 1_795_852_356), timeZone: zone) == "2026-11-28 08:52")
    }

    @Test func sessionsExpire() {
        let sessions = WebSessions(lifetime: .seconds(60), capacity: 2)
        let now = ContinuousClock.now
        let id = sessions.create(now: now).id
        #expect(id.count == 64)
        #expect(sessions.isValid(id, now: now + .seconds(59)))
        #expect(!sessions.isValid(id, now: now + .seconds(60)))
        #expect(!sessions.isValid(id, now: now))
        let a = sessions.create(now: now).id
        let b = sessions.create(now: now + .seconds(1))
        let c = sessions.create(now: now + .seconds(2))
        // The third pushed the oldest out, and says so, so its event streams can be ended.
        #expect(b.evicted.isEmpty && c.evicted == [a])
        let (bID, cID) = (b.id, c.id)
        #expect(!sessions.isValid(a, now: now + .seconds(3)))
        #expect(sessions.isValid(bID, now: now + .seconds(3)) && sessions.isValid(cID, now: now + .seconds(3)))
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
