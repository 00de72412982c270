import AsyncHTTPClient
import ControlProtocol
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import WebAPI
import WorkoutdTesting

/// A real `workoutd` with its web server on a free port, and the API's generated client pointed at it.
///
/// The daemon stores in SQLite in a scratch directory and serves pty wearables.
final class WebDaemon: @unchecked Sendable {
    let directory: URL
    let configFile: String
    let socket: String
    let daemon: DaemonProcess
    /// The address requests go to (the listener's, or 127.0.0.1 for one on every address).
    let host: String
    private(set) var port: Int?

    /// `web` is the `web:` section's body (YAML, indented two spaces).
    ///
    /// The listener's port is read from the log. A `launcher` runs the daemon (`ip netns exec`), reached at `host`.
    init(
        devices: [String] = [],
        web: String = "  listen: 127.0.0.1:0\n",
        environment: [String: String] = [:],
        expectListening: Bool = true,
        launcher: [String] = [],
        host: String = "127.0.0.1"
    ) throws {
        self.host = host
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configFile = directory.appendingPathComponent("workoutd.yaml").path
        socket = directory.appendingPathComponent("control.sock").path
        try Self.configuration(web).write(toFile: configFile, atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(
            arguments: [
                "--config", configFile, "--control-socket", socket, "--state-dir",
                directory.appendingPathComponent("state").path,
            ] + devices.flatMap { ["--device", $0] },
            environment: environment,
            unsetting: ["WORKOUTD_WEB_LISTEN"],
            launcher: launcher,
            readiness: true
        )
        try daemon.waitUntilReady()
        if expectListening { port = try listeningPort(occurrence: 1) }
    }

    static func configuration(_ web: String) -> String {
        "log_level: info\ndiscovery:\n  enabled: false\nweb:\n" + web
    }

    /// A hub on a LAN: a daemon in `namespace`, listening on its inner address, with a login token.
    ///
    /// The IPv6 address with `ipv6`; the token is `WebLoginTests`', in a 0600 file.
    static func onLAN(_ namespace: NetworkNamespace, ipv6: Bool = false) throws -> WebDaemon {
        let host = ipv6 ? namespace.inside6 : namespace.inside
        let listen = ipv6 ? "\"[\(host)]:0\"" : "\(host):0"
        return try WebDaemon(
            web: "  listen: \(listen)\n  token_file: \(try WebLoginTests.tokenFile())\n",
            launcher: namespace.launcher,
            host: host
        )
    }

    /// `workoutd check-config` of a configuration with this `web:` section, run to its exit.
    static func checkConfig(_ web: String) throws -> DaemonProcess {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent(
            "web-check-\(UUID().uuidString.prefix(8)).yaml"
        ).path
        try configuration(web).write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let check = try DaemonProcess(
            arguments: ["check-config", "--config", config],
            unsetting: ["WORKOUTD_WEB_LISTEN"]
        )
        try check.waitForExit()
        return check
    }

    /// The port of the `occurrence`-th "web server listening" line.
    ///
    /// A reload that moves the server logs another.
    func listeningPort(occurrence: Int) throws -> Int {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let lines = daemon.log.split(separator: "\n").filter { $0.contains("web server listening") }
            if lines.count >= occurrence,
                let range = lines[occurrence - 1].range(of: #"address=[^ ]*:(\d+)"#, options: .regularExpression),
                let colon = lines[occurrence - 1][range].lastIndex(of: ":"),
                let port = Int(lines[occurrence - 1][range][lines[occurrence - 1][range].index(after: colon)...])
            {
                return port
            }
            usleep(20_000)
        }
        throw TestingError("no web server listening (#\(occurrence)):\n\(daemon.log)")
    }

    /// Writes a new `web:` section and reloads (SIGHUP), waiting until the reload is applied.
    func reload(web: String) throws {
        let before = daemon.log.components(separatedBy: "configuration reloaded").count
        try Self.configuration(web).write(toFile: configFile, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        let deadline = ContinuousClock.now + .seconds(30)
        while daemon.log.components(separatedBy: "configuration reloaded").count == before {
            guard ContinuousClock.now < deadline else { throw TestingError("reload not applied:\n\(daemon.log)") }
            usleep(20_000)
        }
    }

    var baseURL: String { "http://\(hostHeader)" }

    /// `host:port` as a `Host` header names the listener.
    var hostHeader: String { "\(host.contains(":") ? "[\(host)]" : host):\(port ?? 0)" }

    /// The daemon's resident memory now (`VmRSS` of /proc/<pid>/status), in bytes.
    var residentBytes: Int {
        let status =
            (try? String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// Event streams the daemon has open now (`eventSubscribers` of `workoutctl status`).
    func eventSubscribers() throws -> Int {
        guard let status = try ctlJSON(["status"], as: StatusReport.self).first else {
            throw TestingError("workoutctl status printed nothing")
        }
        return status.eventSubscribers
    }

    /// The generated client, with `middlewares` (e.g. a session cookie) in front of the transport.
    func client(middlewares: [any ClientMiddleware] = []) throws -> Client {
        guard let url = URL(string: baseURL) else { throw TestingError("bad URL \(baseURL)") }
        return Client(
            serverURL: url,
            configuration: .init(dateTranscoder: .iso8601),
            transport: AsyncHTTPClientTransport(),
            middlewares: middlewares
        )
    }

    /// Runs `workoutctl … --json`, decoding each output line as `T`.
    func ctlJSON<T: Decodable>(_ arguments: [String], as type: T.Type) throws -> [T] {
        let output = try Workoutctl.run(["--socket", socket] + arguments + ["--json"])
        guard output.status == 0 else { throw TestingError("workoutctl \(arguments): \(output.stderr)") }
        return try output.lines.map { try ControlSocket.makeDecoder().decode(T.self, from: Data($0.utf8)) }
    }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A raw HTTP exchange, for what the generated client does not do (wrong methods, forms, headers).
struct RawHTTP {
    struct Reply {
        var status: Int
        var headers: [(String, String)]
        var body: String
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }

    /// Redirects are the answer under test, not something to follow.
    ///
    /// No connection is kept between requests, so a listener that stopped is seen as stopped.
    private static let client = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: .init(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(2))
        )
    )

    static func send(
        _ method: HTTPMethod,
        _ url: String,
        headers: [(String, String)] = [],
        body: String? = nil
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Connection", value: "close")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return Reply(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) },
            body: String(buffer: bytes)
        )
    }
}

/// Adds a header to every request of the generated client (a session cookie, a bearer token).
struct HeaderMiddleware: ClientMiddleware {
    var name: HTTPField.Name
    var value: String

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[name] = value
        return try await next(request, body, baseURL)
    }
}
