import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing
import WorkoutdTesting

/// With `web.tls_certificate` and `web.tls_key` the server speaks HTTPS only.
///
/// Its session cookie is `Secure`.
@Suite(.serialized) struct WebTLSTests {
    @Test func aConfiguredCertificateMeansHTTPSAndSecureCookies() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "web-tls-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificate = directory + "/web.crt"
        let key = directory + "/web.key"
        let tokenFile = directory + "/token"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        #expect(openssl.terminationStatus == 0)
        try (WebLoginTests.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)

        let web = try WebDaemon(
            web: """
                  listen: 0.0.0.0:0
                  token_file: \(tokenFile)
                  tls_certificate: \(certificate)
                  tls_key: \(key)

                """
        )
        #expect(web.daemon.log.contains("tls=true"))
        let port = try #require(web.port)

        // Plain HTTP gets no answer from it.
        await #expect(throws: (any Error).self) { try await RawHTTP.send(.GET, "http://127.0.0.1:\(port)/api/status") }

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificate)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow)
        )
        do {
            try await exchange(client, port: port)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func exchange(_ client: HTTPClient, port: Int) async throws {
        var login = HTTPClientRequest(url: "https://localhost:\(port)/login")
        login.method = .POST
        login.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        login.body = .bytes(ByteBuffer(string: "token=\(WebLoginTests.token)"))
        let loggedIn = try await client.execute(login, timeout: .seconds(30))
        #expect(loggedIn.status == .seeOther)
        let cookie = try #require(loggedIn.headers.first(name: "Set-Cookie"))
        #expect(cookie.contains("; Secure"))

        var status = HTTPClientRequest(url: "https://localhost:\(port)/api/status")
        status.headers.add(name: "Authorization", value: "Bearer \(WebLoginTests.token)")
        let answered = try await client.execute(status, timeout: .seconds(30))
        #expect(answered.status == .ok)
        #expect(String(buffer: try await answered.body.collect(upTo: 1 << 20)).contains("\"pid\""))
    }
}
