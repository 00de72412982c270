import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

@Suite("workoutd end to end over ptys", .serialized)
struct DaemonEndToEndTests {
    static let seeds =
        SeedCommands.lines() ?? [
            CommandLines.start(location: "Gary's Gym"),
            CommandLines.end(),
            CommandLines.share(),
        ]

    func decode(_ line: String) throws -> Reply {
        try JSONDecoder().decode(Reply.self, from: Data(line.utf8))
    }

    func startDaemon(_ devices: [String], extra: [String] = []) throws -> DaemonProcess {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("wd-state-\(UUID().uuidString)").path
        return try DaemonProcess(
            arguments: devices.flatMap { ["--device", $0] } + [
                "--state-dir", state, "--log-level", "debug", "--control-socket", "none",
            ] + extra
        )
    }

    @Test("the seed commands are acknowledged in order")
    func seedCommands() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        for seed in Self.seeds { try wearable.send(seed) }
        let replies = try wearable.readLines(3).map(decode)
        #expect(replies.map(\.isSuccess) == [true, true, true])
        #expect(replies.map(\.acknowledgedCommand) == [.startWorkout, .endWorkout, .shareWorkout])
        try daemon.waitForLog("device connected")
        #expect(daemon.log.contains("device=\(wearable.devicePath)"))
    }

    @Test("bad lines get typed errors and the daemon keeps answering")
    func errorsThenRecovery() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        try wearable.write(
            Array("garbage\n".utf8) + [0xFF, 0x0A] + Array(CommandLines.end(id: "e1").utf8) + [0x0D, 0x0A]
        )
        try wearable.write(Array(repeating: UInt8(ascii: "z"), count: 10_000) + [0x0A])
        try wearable.send(CommandLines.start(id: 2, location: "Pool", date: "2020-03-16T19:45:13Z", intensity: 3))
        let replies = try wearable.readLines(5).map(decode)
        let codes = replies.map { $0.errorCode?.rawValue ?? "ok" }
        #expect(codes == ["malformed_json", "malformed_json", "no_active_workout", "line_too_long", "ok"])
        #expect(replies[2].id == .string("e1") && replies[4].id == .integer(2))
        #expect(daemon.process.isRunning)
    }

    @Test("hostile text is refused on the wire, and a value cannot forge a log field (issue 28)")
    func hostileText() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        // ESC, CR and a bidi override in the location; an id that is printable but written to forge fields.
        let escape = try decode(
            try wearable.request(
                #"{"id":1,"command_type":"start_workout","location":"Gym\u001b[31m\rFAKE\u202e","date":"2020-03-16T19:45:13Z","intensityLevel":5}"#
            )
        )
        #expect(
            escape
                == .error(
                    ProtocolError(
                        code: .invalidField,
                        field: "location",
                        message: "'location' must not contain control characters (U+001B at character 4)."
                    ),
                    id: .integer(1)
                )
        )
        let tooLong = try decode(
            try wearable.request(CommandLines.end(id: .string(String(repeating: "x", count: 129))))
        )
        #expect(
            tooLong
                == .error(
                    ProtocolError(
                        code: .invalidField,
                        field: "id",
                        message: "'id' must be at most 128 bytes of UTF-8; got 129."
                    ),
                    id: nil
                )
        )
        let forging = #"x" code=ok field=none level=critical \"#
        let rejected = try decode(try wearable.request(CommandLines.end(id: .string(forging))))
        #expect(rejected.id == .string(forging) && rejected.errorCode == .noActiveWorkout, "nothing was started")

        try daemon.waitForLog("no_active_workout")
        let line = try #require(
            daemon.log.split(separator: "\n").first {
                $0.contains("command rejected") && $0.contains("no_active_workout")
            }
        )
        let keys = LogfmtLine.keys(line)
        #expect(keys.sorted() == ["code", "command_id", "command_type", "device", "node"], "\(line)")
        #expect(line.contains(#"command_id="x\" code=ok field=none level=critical \\""#), "\(line)")
        #expect(!daemon.log.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "the log has raw controls")
    }

    @Test("several devices are served at once, each with its own session")
    func severalDevices() throws {
        let watches = try (0..<3).map { _ in try SimulatedWearable() }
        let daemon = try startDaemon(watches.map(\.devicePath))
        try watches[0].send(Self.seeds[0])
        #expect(try decode(watches[0].readLine()).isSuccess)
        for watch in watches.dropFirst() {
            let reply = try decode(watch.request(CommandLines.end()))
            #expect(reply.outcome == .error(.noActiveWorkout))
        }
        #expect(try decode(watches[0].request(CommandLines.end())).isSuccess)
        _ = daemon
    }

    @Test("a device that disappears is reopened when it comes back, and its session continues")
    func replug() throws {
        let link = try SocatLink()
        let daemon = try startDaemon([link.deviceLink])
        var wearable = try SimulatedWearable(path: link.wearableLink)
        #expect(try decode(wearable.request(Self.seeds[0], timeout: .seconds(10))).isSuccess)
        link.stop()
        try daemon.waitForLog("device disconnected")
        try link.start()
        wearable = try SimulatedWearable(path: link.wearableLink)
        // The reopened device is the same identity (its configured path): the workout is still active.
        let reply = try decode(wearable.request(CommandLines.start(), timeout: .seconds(10)))
        #expect(reply.outcome == .error(.workoutAlreadyActive))
        #expect(daemon.process.isRunning)
    }

    @Test("SIGTERM answers every line already sent, then exits 0")
    func gracefulShutdown() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        #expect(try decode(wearable.request(CommandLines.end())).outcome == .error(.noActiveWorkout))
        let count = 300
        try wearable.write(Array(String(repeating: CommandLines.end(id: 1) + "\n", count: count).utf8))
        usleep(100_000)
        daemon.signal(SIGTERM)
        let replies = try wearable.readLines(count, timeout: .seconds(10))
        #expect(replies.count == count)
        #expect(try daemon.waitForExit() == 0)
    }

    @Test("a device that never reads cannot grow the daemon's memory")
    func neverReadingDevice() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        #expect(try decode(wearable.request(CommandLines.end())).outcome == .error(.noActiveWorkout))
        let before = residentKiB(of: daemon.process.processIdentifier)
        // Write commands and never read a reply: once the pty fills both ways the daemon must stop reading.
        let chunk = Array(String(repeating: CommandLines.end(id: 12345) + "\n", count: 1000).utf8)
        var written = 0
        for _ in 0..<400 {
            do { try wearable.write(chunk, timeout: .milliseconds(200)) } catch { break }
            written += chunk.count
        }
        usleep(300_000)
        let after = residentKiB(of: daemon.process.processIdentifier)
        #expect(written < 400 * chunk.count, "writes should block once the daemon stops reading")
        #expect(after - before < 32 * 1024, "RSS grew from \(before) KiB to \(after) KiB")
        #expect(daemon.process.isRunning)
    }

    @Test("a gigabyte without a newline does not grow the daemon, and the next line is answered")
    func gigabyteWithoutNewline() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        #expect(try decode(wearable.request(CommandLines.end())).outcome == .error(.noActiveWorkout))
        let before = residentKiB(of: daemon.process.processIdentifier)
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        for _ in 0..<1024 { try wearable.write(chunk, timeout: .seconds(30)) }
        let after = residentKiB(of: daemon.process.processIdentifier)
        try wearable.write([0x0A])
        #expect(try decode(wearable.readLine()).outcome == .error(.lineTooLong(limit: 4096)))
        #expect(try decode(wearable.request(CommandLines.end())).outcome == .error(.noActiveWorkout))
        #expect(after - before < 16 * 1024, "RSS grew from \(before) KiB to \(after) KiB")
    }

    @Test("the daemon limits malloc's arenas and thresholds, except where the operator's environment sets them")
    func allocatorLimits() throws {
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath])
        try daemon.waitForLog("allocator limits")
        let line = try #require(daemon.log.split(separator: "\n").first { $0.contains("allocator limits") })
        #expect(line.contains("MALLOC_ARENA_MAX=2"))
        #expect(line.contains("MALLOC_MMAP_THRESHOLD=262144"))
        #expect(line.contains("MALLOC_TRIM_THRESHOLD=524288"))
        #expect(try decode(wearable.request(CommandLines.end())).outcome == .error(.noActiveWorkout))

        // An operator's own setting (a drop-in's Environment=) wins: glibc read it, the daemon leaves it alone.
        let second = try SimulatedWearable()
        let tuned = try DaemonProcess(
            arguments: [
                "--device", second.devicePath, "--log-level", "debug", "--control-socket", "none", "--in-memory",
            ],
            environment: ["MALLOC_ARENA_MAX": "4", "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1048576"]
        )
        try tuned.waitForLog("allocator limits")
        let tunedLine = try #require(tuned.log.split(separator: "\n").first { $0.contains("allocator limits") })
        #expect(!tunedLine.contains("MALLOC_ARENA_MAX"))
        #expect(!tunedLine.contains("MALLOC_TRIM_THRESHOLD"))
        #expect(tunedLine.contains("MALLOC_MMAP_THRESHOLD=262144"))
    }

    @Test("a bad configuration exits with status 78 and names the key")
    func badConfiguration() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        try "serial:\n  baud: fast\n".write(toFile: file, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", file])
        #expect(try daemon.waitForExit() == 78)
        #expect(daemon.log.contains("serial.baud"))

        let env = try DaemonProcess(arguments: [], environment: ["WORKOUTD_SERIAL_MAX_LINE_BYTES": "-1"])
        #expect(try env.waitForExit() == 78)
        #expect(env.log.contains("serial.max_line_bytes"))

        let level = try DaemonProcess(arguments: ["--log-level", "loud"])
        #expect(try level.waitForExit() == 78)
        #expect(level.log.contains("--log-level"))
    }

    @Test("the configured line limit applies")
    func configuredLineLimit() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("limit-\(UUID().uuidString).yaml").path
        try "serial:\n  max_line_bytes: 100\n".write(toFile: file, atomically: true, encoding: .utf8)
        let wearable = try SimulatedWearable()
        let daemon = try startDaemon([wearable.devicePath], extra: ["--config", file])
        let reply = try decode(
            wearable.request(#"{"command_type":"end_workout","padding":"\#(String(repeating: "p", count: 120))"}"#)
        )
        #expect(reply.outcome == .error(.lineTooLong(limit: 100)))
        _ = daemon
    }
}
