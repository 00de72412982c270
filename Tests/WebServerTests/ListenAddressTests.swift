import Testing

@testable import WebServer

@Suite struct ListenAddressTests {
    @Test func parsesHostAndPort() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8470") == ListenAddress(host: "127.0.0.1", port: 8470))
        #expect(try ListenAddress(parsing: "[::1]:80") == ListenAddress(host: "::1", port: 80))
        #expect(try ListenAddress(parsing: "0.0.0.0:8470").host == "0.0.0.0")
    }

    @Test func refusesWhatIsNotHostAndPort() {
        for text in ["8470", "127.0.0.1", ":8470", "host:70000", "a b:1", "[::1]8470"] {
            #expect(throws: ListenAddressError.self, "\(text)") { try ListenAddress(parsing: text) }
        }
    }

    @Test func onlyLoopbackNeedsNoLogin() throws {
        for text in ["127.0.0.1:1", "127.0.0.2:1", "localhost:1", "[::1]:1"] {
            #expect(try ListenAddress(parsing: text).isLoopback, "\(text)")
        }
        for text in ["0.0.0.0:1", "192.168.1.5:1", "[::]:1", "hub.local:1", "127.0.0.1.evil:1"] {
            #expect(try !ListenAddress(parsing: text).isLoopback, "\(text)")
        }
    }
}
