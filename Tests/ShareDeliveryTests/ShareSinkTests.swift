import Foundation
import NIOHTTP1
import SerialTransport
import ServiceSupport
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import ShareDelivery

@Suite struct ShareSinkTests {
    static let workout: WorkoutRecord = {
        var record = WorkoutRecord(
            id: 41,
            device: "wearable-1",
            workout: Workout(location: "Gary's Gym", date: DecodedLines.date, intensityLevel: 5),
            startedAt: Date(timeIntervalSince1970: 1_700_000_000),
            startCommandID: .integer(1)
        )
        record.endedAt = Date(timeIntervalSince1970: 1_700_001_800)
        return record
    }()

    static func payload(id: Int64 = 7, service: ShareService = .twitter) -> SharePayload {
        SharePayload(
            share: ShareRecord(
                id: id,
                workoutID: 41,
                device: "wearable-1",
                service: service,
                queuedAt: Date(timeIntervalSince1970: 1_700_001_900)
            ),
            workout: workout
        )
    }

    @Test func payloadNamesTheShareAndTheWorkout() throws {
        let object = try #require(JSONSerialization.jsonObject(with: Self.payload().json()) as? [String: Any])
        #expect(object["share_id"] as? Int == 7)
        #expect(object["service"] as? String == "twitter")
        let workout = try #require(object["workout"] as? [String: Any])
        #expect(workout["location"] as? String == "Gary's Gym")
        #expect(workout["date"] as? String == "2020-03-16 19:45:13 +0000")
        #expect(workout["duration_seconds"] as? Double == 1800)
    }

    @Test func spoolWritesOneCompleteFilePerShareAndNothingElse() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sink = SpoolShareSink(stateDirectory: directory.path)
        try await sink.deliver(Self.payload(id: 7))
        try await sink.deliver(Self.payload(id: 8))
        try await sink.deliver(Self.payload(id: 7))  // a redelivery after a crash rewrites the same file

        let spool = directory.path + "/outbox/twitter"
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: spool).sorted() == ["share-7.json", "share-8.json"]
        )
        let text = try String(contentsOfFile: spool + "/share-7.json", encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        #expect(try Data(text.utf8).dropLast() == Self.payload(id: 7).json())
    }

    @Test func spoolReportsAnUnwritableOutbox() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A regular file where the service directory should be.
        try FileManager.default.createDirectory(atPath: directory.path + "/outbox", withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: directory.path + "/outbox/twitter"))
        await #expect(throws: (any Error).self) {
            try await SpoolShareSink(stateDirectory: directory.path).deliver(Self.payload())
        }
    }

    @Test func aSpoolBatchFailsOnlyTheSharesWhoseDirectoryIsUnwritable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/outbox", withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: directory.path + "/outbox/facebook"))  // not a directory
        let payloads = [
            Self.payload(id: 1), Self.payload(id: 2, service: .facebook), Self.payload(id: 3, service: .instagram),
            Self.payload(id: 4),
        ]
        let results = await SpoolShareSink(stateDirectory: directory.path).deliver(payloads)

        #expect(results.map { (try? $0.get()) != nil } == [true, false, true, true])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/outbox/twitter").sorted() == [
                "share-1.json", "share-4.json",
            ]
        )
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path + "/outbox/instagram") == [
                "share-3.json"
            ]
        )
        let text = try String(contentsOfFile: directory.path + "/outbox/instagram/share-3.json", encoding: .utf8)
        #expect(try Data(text.utf8).dropLast() == Self.payload(id: 3, service: .instagram).json())
    }

    @Test func webhookPostsTheJSONAndFailsOnAServerError() async throws {
        let server = try await TestHTTPServer(statuses: [.internalServerError])
        let sink = WebhookShareSink(url: server.url, timeout: .seconds(5))
        let error = await #expect(throws: ShareDeliveryError.self) { try await sink.deliver(Self.payload()) }
        #expect(error?.description.contains("500") == true)
        try await sink.deliver(Self.payload())
        try await server.stop()

        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.method == .POST && $0.uri == "/shares" })
        #expect(requests.first?.headers["Content-Type"] == ["application/json"])
        #expect(requests.first?.headers["Idempotency-Key"] == ["share-7"])
        #expect(try Data(requests[1].body.utf8) == Self.payload().json())
    }

    @Test func webhookReportsARefusedConnection() async throws {
        let server = try await TestHTTPServer()
        let url = server.url
        try await server.stop()
        await #expect(throws: ShareDeliveryError.self) {
            try await WebhookShareSink(url: url, timeout: .seconds(2)).deliver(Self.payload())
        }
    }

    @Test func execFeedsTheJSONOnStdin() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.path + "/received.json"
        try await ExecShareSink(command: ["/bin/sh", "-c", "cat > \"$0\"", output], timeout: .seconds(10)).deliver(
            Self.payload()
        )
        let received = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(received == (try Self.payload().json()) + Data("\n".utf8))
    }

    @Test func execFailsOnANonZeroExitAndOnAMissingProgram() async throws {
        let failing = await #expect(throws: ShareDeliveryError.self) {
            try await ExecShareSink(command: ["sh", "-c", "exit 3"], timeout: .seconds(10)).deliver(Self.payload())
        }
        #expect(failing?.description.contains("status 3") == true)
        await #expect(throws: ShareDeliveryError.self) {
            try await ExecShareSink(command: ["/nonexistent/post-share"], timeout: .seconds(10)).deliver(Self.payload())
        }
    }

    @Test func execIsKilledWhenItOutlivesItsTimeout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pidFile = directory.path + "/pid"
        let error = await #expect(throws: ShareDeliveryError.self) {
            try await ExecShareSink(
                command: ["/bin/sh", "-c", "echo $$ > \"$0\"; exec sleep 60", pidFile],
                timeout: .milliseconds(300)
            ).deliver(Self.payload())
        }
        // Not timed (the machine may be loaded): a sleep that ran its 60 s would have succeeded, not been killed.
        #expect(error?.description.contains("killed") == true)
        let pid = try #require(
            Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        )
        #expect(kill(pid, 0) != 0, "the timed-out command must be gone")
    }

    @Test func webhookNamesItsURLWithoutUserPasswordOrQuery() async throws {
        let server = try await TestHTTPServer(statuses: [.internalServerError])
        let port = server.port
        let url = "http://hub:pa55word@127.0.0.1:\(port)/shares?token=s3cret-token#frag"
        let error = await #expect(throws: ShareDeliveryError.self) {
            try await WebhookShareSink(url: url, timeout: .seconds(5)).deliver(Self.payload())
        }
        try await server.stop()
        let message = error?.description ?? ""
        #expect(message.contains("http://127.0.0.1:\(port)/shares answered 500"), "\(message)")
        for secret in ["pa55word", "s3cret-token", "hub:", "token=", "frag"] {
            #expect(!message.contains(secret), "\(message)")
        }
        // The request itself still carries the query: the receiver needs its token.
        #expect(server.requests.first?.uri == "/shares?token=s3cret-token")

        let stopped = try await TestHTTPServer()
        let stoppedURL = "http://hub:pa55word@127.0.0.1:\(stopped.port)/shares?token=s3cret-token"
        try await stopped.stop()
        let refused = await #expect(throws: ShareDeliveryError.self) {
            try await WebhookShareSink(url: stoppedURL, timeout: .seconds(2)).deliver(Self.payload())
        }
        let refusedMessage = try #require(refused?.description)
        #expect(
            refusedMessage.contains("http://127.0.0.1:") && !refusedMessage.contains("s3cret-token"),
            "\(refusedMessage)"
        )
        let configuration = #expect(throws: ShareSinkConfigurationError.self) {
            _ = try ShareSinkConfiguration.Sink(
                keyPrefix: "shares.twitter",
                sink: "webhook",
                url: "ftp://u:pa55word@host/x?token=s3cret-token",
                command: nil,
                timeoutMilliseconds: nil
            )
        }
        let configurationMessage = try #require(configuration?.description)
        #expect(
            !configurationMessage.contains("s3cret-token") && !configurationMessage.contains("pa55word"),
            "\(configurationMessage)"
        )
    }

    @Test(arguments: [HTTPResponseStatus.found, .movedPermanently, .temporaryRedirect, .permanentRedirect])
    func webhookRedirectsAreDeliveryFailuresNotFollowed(status: HTTPResponseStatus) async throws {
        let server = try await TestHTTPServer(statuses: [status])
        let error = await #expect(throws: ShareDeliveryError.self) {
            try await WebhookShareSink(url: server.url, timeout: .seconds(5)).deliver(Self.payload())
        }
        try await server.stop()
        #expect(
            error?.description.contains("webhook answered \(status.code) (redirects are not followed)") == true,
            "\(error?.description ?? "")"
        )
        #expect(server.requests.map(\.uri) == ["/shares"], "one request, to the configured URL only")
    }

    @Test func execChildGetsOnlyPathAndTheLocaleInItsEnvironment() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.path + "/env"
        var daemonEnvironment = ProcessInfo.processInfo.environment
        daemonEnvironment["WORKOUTD_TEST_SECRET"] = "hunter2"
        daemonEnvironment["WORKOUTD_REPLICATION_POSTGRES_URL"] = "postgresql://workoutd:gym-secret@db.example/gym"
        daemonEnvironment["LANG"] = "C.UTF-8"
        daemonEnvironment["LC_TIME"] = "C"
        daemonEnvironment["HOME"] = "/root"
        let sink = ExecShareSink(
            command: ["/bin/sh", "-c", "env > \"$0\"", output],
            timeout: .seconds(10),
            inheritedEnvironment: daemonEnvironment
        )
        try await sink.deliver(Self.payload())
        let variables = Set(
            try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap {
                $0.split(separator: "=").first.map(String.init)
            }
        )
        // dash adds PWD of its own; nothing else may appear.
        #expect(variables.subtracting(["PWD"]) == ["PATH", "LANG", "LC_TIME"], "\(variables)")
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(!text.contains("hunter2") && !text.contains("gym-secret"))
        let path = daemonEnvironment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        #expect(text.contains("PATH=\(path)\n"))
    }

    @Test func execChildStartsWithDefaultSignalsInItsOwnProcessGroup() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.path + "/status"
        // The sink ignores SIGPIPE in the daemon (this test process too); the child must not inherit that.
        try await ExecShareSink(
            command: ["/bin/sh", "-c", "exec cat /proc/self/status /proc/self/stat > \"$0\"", output],
            timeout: .seconds(10)
        )
        .deliver(Self.payload())
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let fields = Dictionary(
            text.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)) : nil
            },
            uniquingKeysWith: { first, _ in first }
        )
        // Signals 1–31 and the real-time ones from SIGRTMIN (34) on. glibc's posix_spawn leaves its own two
        // reserved signals (32, 33: never sent to a program by anyone but glibc itself) ignored in every child.
        let ignored = try #require(UInt64(fields["SigIgn"] ?? "", radix: 16))
        #expect(ignored & ~UInt64(0x1_8000_0000) == 0, "\(fields["SigIgn"] ?? "")")
        #expect(fields["SigBlk"] == "0000000000000000", "\(fields["SigBlk"] ?? "")")
        // /proc/self/stat: pid (comm) state ppid pgrp ...: the command leads a group of its own.
        let stat = try #require(text.split(separator: "\n").last { $0.contains(") ") })
        let nameEnd = try #require(stat.range(of: ") "))
        let afterName = stat[nameEnd.upperBound...].split(separator: " ")
        let pid = stat.split(separator: " ").first.map(String.init)
        #expect(afterName.count > 2 && String(afterName[2]) == pid, "\(stat)")
        #expect(String(afterName[2]) != String(getpgrp()))
    }

    @Test func execTimeoutKillsTheCommandsGrandchildrenToo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pids = directory.path + "/pids"
        let error = await #expect(throws: ShareDeliveryError.self) {
            try await ExecShareSink(
                command: ["/bin/sh", "-c", "sleep 60 & echo $$ $! > \"$0\"; wait", pids],
                timeout: .milliseconds(300)
            ).deliver(Self.payload())
        }
        #expect(error?.description.contains("killed") == true)
        let numbers = try String(contentsOfFile: pids, encoding: .utf8).split(whereSeparator: \.isWhitespace).compactMap
        { Int32($0) }
        #expect(numbers.count == 2)
        for pid in numbers {
            // SIGKILL is sent; the kernel ends the process a moment later, and an orphan waits for its reaper as
            // a zombie: gone means no /proc entry, or a zombie's.
            var gone = false
            for _ in 0..<1000 where !gone {
                let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")")
                    .last?.split(separator: " ").first
                gone = state == nil || state == "Z"
                if !gone { usleep(10_000) }
            }
            #expect(gone, "process \(pid) of the timed-out command still runs")
        }
    }

    @Test func backoffDoublesUpToItsCap() {
        let backoff = RetryBackoff(initial: .seconds(2), maximum: .seconds(60))
        #expect(
            (1...7).map { backoff.delay(afterAttempts: $0) } == [2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) }
        )
        #expect(backoff.delay(afterAttempts: 10_000) == .seconds(60))
    }

    @Test func sinkConfigurationNamesTheKeyToFix() throws {
        let webhook = try ShareSinkConfiguration.Sink(
            keyPrefix: "shares.twitter",
            sink: "webhook",
            url: "http://127.0.0.1:9/x",
            command: nil,
            timeoutMilliseconds: 1500
        )
        #expect(webhook == .init(kind: .webhook(url: "http://127.0.0.1:9/x"), timeout: .milliseconds(1500)))
        #expect(
            try ShareSinkConfiguration.Sink(
                keyPrefix: "shares.x",
                sink: nil,
                url: nil,
                command: nil,
                timeoutMilliseconds: nil
            ).kind == .spool
        )
        let missingURL = #expect(throws: ShareSinkConfigurationError.self) {
            try ShareSinkConfiguration.Sink(
                keyPrefix: "shares.twitter",
                sink: "webhook",
                url: nil,
                command: nil,
                timeoutMilliseconds: nil
            )
        }
        #expect(missingURL?.key == "shares.twitter.url")
        let badKind = #expect(throws: ShareSinkConfigurationError.self) {
            try ShareSinkConfiguration.Sink(
                keyPrefix: "shares.facebook",
                sink: "carrier-pigeon",
                url: nil,
                command: nil,
                timeoutMilliseconds: nil
            )
        }
        #expect(badKind?.key == "shares.facebook.sink")
        let badTimeout = #expect(throws: ShareSinkConfigurationError.self) {
            try ShareSinkConfiguration.Sink(
                keyPrefix: "shares.instagram",
                sink: "exec",
                url: nil,
                command: ["true"],
                timeoutMilliseconds: 0
            )
        }
        #expect(badTimeout?.key == "shares.instagram.timeout_ms")
    }
}
