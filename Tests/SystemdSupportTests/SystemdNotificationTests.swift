import Foundation
import Glibc
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing
import WorkoutdTesting

@testable import SystemdSupport

/// Everything here talks to libsystemd through a real `NOTIFY_SOCKET`. The environment is
/// process-wide, hence one serialized suite.
@Suite(.serialized)
struct SystemdNotificationTests {
    private let logger = Logger(label: "test")

    @Test func withoutNotifySocketNothingIsSent() async throws {
        try await withEnvironment(["NOTIFY_SOCKET": nil, "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "\(getpid())"]) {
            let notifier = SystemdNotifier()
            #expect(!notifier.isConnected)
            #expect(!notifier.ready(status: "ready"))
            #expect(!notifier.watchdogPing())
            // sd_watchdog_enabled() does not need the socket, but a ping would go nowhere.
            let listener = try NotifySocketListener()
            #expect(await listener.next(timeout: .milliseconds(100)) == nil)
        }
    }

    @Test func notificationsReachTheSocketAsSdNotifySendsThem() async throws {
        let listener = try NotifySocketListener()
        await withEnvironment(["NOTIFY_SOCKET": listener.path]) {
            let notifier = SystemdNotifier()
            #expect(notifier.isConnected)
            #expect(notifier.ready(status: "2 devices,\n1 workout active"))
            #expect(await listener.next(timeout: .seconds(2)) == "READY=1\nSTATUS=2 devices, 1 workout active")
            #expect(notifier.status("1 device"))
            #expect(await listener.next(timeout: .seconds(2)) == "STATUS=1 device")
            #expect(notifier.stopping())
            #expect(await listener.next(timeout: .seconds(2)) == "STOPPING=1")
            #expect(notifier.watchdogPing())
            #expect(await listener.next(timeout: .seconds(2)) == "WATCHDOG=1")
        }
    }

    @Test func reloadingCarriesTheMonotonicClockItBeganAt() async throws {
        let listener = try NotifySocketListener()
        try await withEnvironment(["NOTIFY_SOCKET": listener.path]) {
            var before = timespec()
            clock_gettime(CLOCK_MONOTONIC, &before)
            #expect(SystemdNotifier().reloading())
            var after = timespec()
            clock_gettime(CLOCK_MONOTONIC, &after)
            let message = try #require(await listener.next(timeout: .seconds(2)))
            let fields = message.split(separator: "\n")
            #expect(fields.first == "RELOADING=1")
            let stamp = try #require(
                fields.dropFirst().first.flatMap { $0.hasPrefix("MONOTONIC_USEC=") ? UInt64($0.dropFirst(15)) : nil }
            )
            // CLOCK_MONOTONIC (what systemd compares with), not wall time: between the two readings.
            #expect(UInt64(before.tv_sec) * 1_000_000 + UInt64(before.tv_nsec) / 1000 <= stamp)
            #expect(stamp <= UInt64(after.tv_sec) * 1_000_000 + UInt64(after.tv_nsec) / 1000)
        }
    }

    @Test func watchdogIntervalComesFromTheEnvironmentOnlyForThisProcess() async {
        await withEnvironment(["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "\(getpid())"]) {
            #expect(SystemdNotifier().watchdogInterval == .seconds(4))
        }
        await withEnvironment(["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"]) {
            #expect(SystemdNotifier().watchdogInterval == nil)
        }
        await withEnvironment(["WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) {
            #expect(SystemdNotifier().watchdogInterval == nil)
        }
    }

    @Test func watchdogPingsStopWhileAnEventLoopIsBlockedAndResumeAfter() async throws {
        let listener = try NotifySocketListener()
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        try await withEnvironment([
            "NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": "\(getpid())",
        ]) {
            let watchdog = WatchdogService(notifier: SystemdNotifier(), eventLoopGroup: loops, logger: logger)
            try await runServices([watchdog]) {
                // Counted, not timed: on a loaded machine a 100 ms ping may come late, but it must come. The
                // bound is generous because tests in other suites that block the task pool delay the pinger too.
                var pings = 0
                while pings < 3, let message = await listener.next(timeout: .seconds(30)) {
                    if message == "WATCHDOG=1" { pings += 1 }
                }
                #expect(pings >= 3, "pings keep coming while every loop runs")

                // Hang the second loop; the first keeps running, which must not be enough.
                let loopsArray = Array(loops.makeIterator())
                let hung = DispatchSemaphore(value: 0)
                loopsArray[1].execute {
                    hung.signal()
                    usleep(8_000_000)
                }
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        hung.wait()
                        continuation.resume()
                    }
                }
                // A ping already in flight, however late: on a heavily loaded machine one came several
                // intervals late.
                _ = await listener.all(during: .milliseconds(2_500))
                let whileHung = await listener.all(during: .milliseconds(2_000))
                #expect(whileHung.isEmpty, "no ping while a loop is hung: \(whileHung)")

                var afterwards: [String] = []
                while !afterwards.contains("WATCHDOG=1"), let message = await listener.next(timeout: .seconds(30)) {
                    afterwards.append(message)
                }
                #expect(afterwards.contains("WATCHDOG=1"), "pings resume once the loop runs again")
            }
        }
        try await loops.shutdownGracefully()
    }

    @Test func withoutWatchdogTheServiceWaitsForShutdownAndPingsNothing() async throws {
        let listener = try NotifySocketListener()
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await withEnvironment(["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) {
            let watchdog = WatchdogService(notifier: SystemdNotifier(), eventLoopGroup: loops, logger: logger)
            try await runServices([watchdog]) {
                #expect(await listener.all(during: .milliseconds(300)).isEmpty)
            }
        }
        try await loops.shutdownGracefully()
    }

    @Test func readyWaitsForStartUpThenStatusFollowsChangesAndShutdownSaysStopping() async throws {
        let listener = try NotifySocketListener()
        let started = AsyncStream.makeStream(of: Void.self)
        let description = Mutex("0 devices, no workout active")
        let changes = SystemdStatusService.makeChangeStream()
        try await withEnvironment(["NOTIFY_SOCKET": listener.path]) {
            let status = SystemdStatusService(
                notifier: SystemdNotifier(),
                changes: changes.stream,
                logger: logger,
                untilReady: { for await _ in started.stream { return } },
                describe: { description.withLock { $0 } }
            )
            try await runServices([status]) {
                #expect(await listener.next(timeout: .milliseconds(300)) == nil, "no READY before start-up is done")
                started.continuation.yield()
                #expect(await listener.next(timeout: .seconds(2)) == "READY=1\nSTATUS=0 devices, no workout active")
                changes.continuation.yield()
                #expect(await listener.next(timeout: .milliseconds(200)) == nil, "unchanged status is not resent")
                description.withLock { $0 = "1 device, 1 workout active" }
                #expect(
                    await listener.next(timeout: .milliseconds(200)) == nil,
                    "no status line without a change signal"
                )
                changes.continuation.yield()
                #expect(await listener.next(timeout: .seconds(2)) == "STATUS=1 device, 1 workout active")
            }
            #expect(await listener.next(timeout: .seconds(2)) == "STOPPING=1\nSTATUS=stopping: draining devices")
        }
    }

    @Test func shutdownBeforeStartUpCompletesSaysStoppingWithoutReady() async throws {
        let listener = try NotifySocketListener()
        try await withEnvironment(["NOTIFY_SOCKET": listener.path]) {
            let status = SystemdStatusService(
                notifier: SystemdNotifier(),
                changes: SystemdStatusService.makeChangeStream().stream,
                logger: logger,
                untilReady: { try await Task.sleep(for: .seconds(60)) },
                describe: { "never" }
            )
            try await runServices([status]) {}
            #expect(
                await listener.next(timeout: .seconds(2)) == "STOPPING=1\nSTATUS=stopping before start-up completed"
            )
        }
    }

    @Test func journalStreamIsRecognisedOnlyForTheDescriptorItNames() async throws {
        var journal: [CInt] = [0, 0]
        var elsewhere: [CInt] = [0, 0]
        #expect(pipe(&journal) == 0)
        #expect(pipe(&elsewhere) == 0)
        defer { for descriptor in journal + elsewhere { close(descriptor) } }
        var info = stat()
        #expect(fstat(journal[1], &info) == 0)
        let value = "\(info.st_dev):\(info.st_ino)"
        await withEnvironment(["JOURNAL_STREAM": value]) {
            #expect(JournalStream.isConnected(fileDescriptor: journal[1]))
            // Another stream (a child's redirected stderr) must not be fooled by the inherited variable.
            #expect(!JournalStream.isConnected(fileDescriptor: elsewhere[1]))
        }
        await withEnvironment(["JOURNAL_STREAM": nil]) {
            #expect(!JournalStream.isConnected(fileDescriptor: journal[1]))
        }
        #expect(!JournalStream.matches("garbage", fileDescriptor: journal[1]))
        #expect(!JournalStream.matches("\(info.st_dev):", fileDescriptor: journal[1]))
    }

    /// Runs `services` in a ServiceGroup during `body`, then shuts the group down gracefully.
    private func runServices(_ services: [any Service], during body: () async throws -> Void) async throws {
        let group = ServiceGroup(services: services, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await body()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
