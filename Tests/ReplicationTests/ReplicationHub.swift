import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

/// One hub under test: the real daemon with its own state, simulated wearables and replication.
///
/// It has its own state directory and control socket, simulated wearables on ptys, and a `replication:` section
/// pointing at the test's PostgreSQL.
final class ReplicationHub: @unchecked Sendable {
    let hubID: String
    let directory: String
    let configFile: String
    let socket: String
    let wearables: [SimulatedWearable]
    var daemon: DaemonProcess?

    init(
        hubID: String,
        devices: Int,
        postgresURL: String,
        passwordFile: String? = nil,
        cluster: PostgresCluster?
    ) throws {
        self.hubID = hubID
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("wd-repl-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        configFile = directory + "/workoutd.yaml"
        socket = directory + "/control.sock"
        let password = try passwordFile ?? cluster?.writePasswordFile(in: directory) ?? ""
        try """
        log_level: info
        discovery:
          enabled: false
        replication:
          postgres_url: "\(postgresURL)"
          password_file: "\(password)"
          hub_id: "\(hubID)"

        """.write(toFile: configFile, atomically: true, encoding: .utf8)
        wearables = try (0..<devices).map { _ in try SimulatedWearable() }
    }

    /// `replication: false` starts the same hub (state directory, devices) with replication off.
    func start(replication: Bool = true, environment: [String: String] = [:]) throws {
        let config: String
        if replication {
            config = configFile
        } else {
            config = directory + "/without-replication.yaml"
            try "log_level: info\ndiscovery:\n  enabled: false\n".write(
                toFile: config,
                atomically: true,
                encoding: .utf8
            )
        }
        let daemon = try DaemonProcess(
            arguments: ["--config", config, "--state-dir", directory + "/state", "--control-socket", socket]
                + wearables.flatMap { ["--device", $0.devicePath] },
            environment: environment,
            readiness: true
        )
        try daemon.waitUntilReady()
        if replication { try daemon.waitForLog("replication on") }
        self.daemon = daemon
    }

    /// `cycles` start/end/share cycles on every wearable, side by side; returns every reply.
    ///
    /// One request at a time per wearable. `activeAtEnd` leaves one more workout started on each wearable.
    func runLoad(
        cycles: Int,
        activeAtEnd: Bool = false,
        tag: String = "c",
        afterEachCycle: @Sendable (Int) -> Void = { _ in }
    ) throws -> [Reply] {
        let results = LockedReplies()
        DispatchQueue.concurrentPerform(iterations: wearables.count) { index in
            let wearable = wearables[index]
            do {
                for n in 0..<cycles {
                    for line in Self.cycle(n, device: index, tag: tag) {
                        results.append(try decode(wearable.request(line, timeout: .seconds(30))))
                    }
                    if index == 0 { afterEachCycle(n) }
                }
                if activeAtEnd {
                    results.append(
                        try decode(
                            wearable.request(Self.cycle(cycles, device: index, tag: tag)[0], timeout: .seconds(30))
                        )
                    )
                }
            } catch {
                results.fail(error)
            }
        }
        return try results.all()
    }

    /// `body`'s result; its error carries the daemon's log, which says what the daemon was doing.
    func withDaemonLogOnFailure<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw TestingError("\(error)\n\(daemon?.log ?? "")")
        }
    }

    static func cycle(_ n: Int, device: Int, tag: String) -> [String] {
        [
            CommandLines.start(id: "\(tag)-start-\(device)-\(n)", location: "Room \(device)", intensity: n % 10 + 1),
            CommandLines.end(id: "\(tag)-end-\(device)-\(n)"),
            CommandLines.share(id: "\(tag)-share-\(device)-\(n)"),
        ]
    }

    /// `workoutctl status --json`'s `replication` object.
    func replicationStatus() throws -> [String: Any] {
        let output = try Workoutctl.run(["--socket", socket, "status", "--json"])
        guard output.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any],
            let replication = object["replication"] as? [String: Any]
        else {
            throw TestingError("workoutctl status --json gave no replication object: \(output.stdout) \(output.stderr)")
        }
        return replication
    }

    /// `workoutctl status`'s text line for replication.
    func replicationStatusLine() throws -> String {
        let output = try Workoutctl.run(["--socket", socket, "status"])
        return output.lines.first { $0.hasPrefix("replication") } ?? ""
    }

    /// Waits until `condition` holds for the replication status; throws with the last status and the log.
    @discardableResult
    func waitForStatus(
        timeout: Duration = .seconds(120),
        _ what: String,
        _ condition: ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        var last: [String: Any] = [:]
        while ContinuousClock.now < deadline {
            last = try replicationStatus()
            if condition(last) { return last }
            usleep(100_000)
        }
        throw TestingError("replication never became \(what): \(last)\n\(daemon?.log ?? "")")
    }

    /// Waits until everything committed is shipped.
    func waitUntilShipped(timeout: Duration = .seconds(180)) throws {
        try waitForStatus(timeout: timeout, "connected with nothing pending") {
            $0["state"] as? String == "connected" && $0["pending"] as? Int == 0
        }
    }

    /// Adds `lines` (indented keys) to the configuration file's `replication:` section, which ends it.
    func appendToReplicationSection(_ lines: String) throws {
        let text = try String(contentsOfFile: configFile, encoding: .utf8)
        try (text + lines).write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    func stop() {
        daemon?.stop()
        daemon = nil
    }

    func remove() {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Starts every hub, then runs `cycles` start/end/share cycles on each, all side by side.
///
/// A hub that does not start stops the test; a reply that is not `ok` is recorded as the test's issue.
func startAndLoadSideBySide(_ hubs: [ReplicationHub], cycles: Int) throws {
    let failures = LockedText()
    simultaneously(hubs.count) { index in
        do { try hubs[index].start() } catch { failures.set("hub \(index) did not start: \(error)") }
    }
    try #require(failures.value.isEmpty, "\(failures.value)")
    simultaneously(hubs.count) { index in
        do {
            let replies = try hubs[index].runLoad(cycles: cycles)
            if replies.count != 3 * cycles || !replies.allSatisfy({ $0.isSuccess }) {
                failures.set("hub \(index): \(replies.count) replies, not all ok")
            }
        } catch {
            failures.set("hub \(index): \(error)")
        }
    }
    #expect(failures.value.isEmpty, "\(failures.value)")
}

func decode(_ line: String) throws -> Reply {
    try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
}

/// Replies gathered from several wearables' threads.
final class LockedReplies: @unchecked Sendable {
    private let lock = NSLock()
    private var replies: [Reply] = []
    private var error: (any Error)?

    func append(_ reply: Reply) { lock.withLock { replies.append(reply) } }
    func fail(_ error: any Error) { lock.withLock { self.error = self.error ?? error } }
    func all() throws -> [Reply] {
        try lock.withLock {
            if let error { throw error }
            return replies
        }
    }
}
