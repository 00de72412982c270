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
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct WebTLSTests {
    /// A self-signed certificate for localhost and 127.0.0.1, and its key (mode 0600).
    ///
    /// Both are written in `directory`, named `name` (the certificate's subject says so too).
    static func makeCertificate(
        in directory: String,
        name: String = "localhost"
    ) throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(name).crt"
        let key = directory + "/\(name).key"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(name)",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw TestingError("openssl req failed") }
        chmod(key, 0o600)
        return (certificate, key)
    }

    static func scratchDirectory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "web-tls-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func aConfiguredCertificateMeansHTTPSAndSecureCookies() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try Self.makeCertificate(in: directory)
        let tokenFile = try WebLoginTests.tokenFile()
        defer { try? FileManager.default.removeItem(atPath: tokenFile) }

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

    @Test func aKeyOthersCanReadIsRefused() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try Self.makeCertificate(in: directory)
        chmod(key, 0o644)
        let check = try WebDaemon.checkConfig(
            "  listen: 127.0.0.1:0\n  tls_certificate: \(certificate)\n  tls_key: \(key)\n"
        )
        #expect(check.process.terminationStatus == 78)
        #expect(check.log.contains("web.tls_key"), "\(check.log)")
        #expect(check.log.contains("0644"), "\(check.log)")
    }

    @Test func aReloadServesAReplacedCertificate() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try Self.makeCertificate(in: directory, name: "first")
        let old = directory + "/old.crt"
        try FileManager.default.copyItem(atPath: certificate, toPath: old)
        let section = "  listen: 127.0.0.1:0\n  tls_certificate: \(certificate)\n  tls_key: \(key)\n"
        let web = try WebDaemon(web: section)
        #expect(try await Self.handshakeSucceeds(port: try #require(web.port), trusting: old))

        // Renewed in place (same paths), as certbot or an operator would, then a reload.
        let renewed = try Self.makeCertificate(in: directory, name: "second")
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.moveItem(atPath: renewed.certificate, toPath: certificate)
        try FileManager.default.moveItem(atPath: renewed.key, toPath: key)
        try web.reload(web: section)
        let port = try web.listeningPort(occurrence: 2)
        // Each certificate is self-signed: a client that trusts only one succeeds only against that one.
        #expect(
            try await Self.handshakeSucceeds(port: port, trusting: certificate),
            "the new certificate is not served"
        )
        #expect(try await !Self.handshakeSucceeds(port: port, trusting: old), "the old certificate is still served")
    }

    /// Whether `GET /api/status` over TLS to `port` succeeds for a client that trusts only `certificate`.
    static func handshakeSucceeds(port: Int, trusting certificate: String) async throws -> Bool {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificate)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let succeeded: Bool
        do {
            let response = try await client.execute(
                HTTPClientRequest(url: "https://localhost:\(port)/api/status"),
                timeout: .seconds(30)
            )
            succeeded = response.status == .ok
        } catch {
            succeeded = false
        }
        try await client.shutdown()
        return succeeded
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
