import Foundation
import Logging
import NIOPosix
import SerialTransport
import Testing
import WorkoutEngine
import WorkoutdTesting

/// A tty another program holds (its flock) is waited for, not given up on like a missing node.
///
/// A discovered device's bounded retries do not run out while the holder keeps it.
@Suite struct HeldTTYTests {
    @Test func aHeldTTYOutlastsTheGiveUpLimitAndIsServedWhenReleased() async throws {
        let wearable = try SimulatedWearable()
        let holder = open(wearable.devicePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(holder >= 0)
        try #require(flock(holder, LOCK_EX | LOCK_NB) == 0)
        var holding = true
        defer { if holding { close(holder) } }

        let manager = DeviceManager(
            group: MultiThreadedEventLoopGroup.singleton,
            engine: try await WorkoutEngine(store: InMemoryWorkoutStore()),
            options: PipelineOptions(),
            logger: Logger(label: "test")
        )
        let policy = ReconnectPolicy(
            initialDelay: .milliseconds(5),
            maximumDelay: .milliseconds(20),
            giveUpAfter: .milliseconds(100),
            reopenAfterClose: false
        )
        await manager.attach(DeviceSpec(path: wearable.devicePath, identity: "held", policy: policy))

        // Waiting for the holder, with the reason to show.
        var waiting: String?
        while waiting == nil {
            waiting = await manager.devices().first?.snapshot.waitingReason
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(waiting == "held by another program (pid \(getpid()))")
        // Well past the give-up limit (a lower bound: a slow machine only retries less), still attached.
        try await Task.sleep(for: .milliseconds(500))
        #expect(await manager.devices().map(\.path) == [wearable.devicePath], "not given up while held")

        flock(holder, LOCK_UN)
        close(holder)
        holding = false
        // Opened once released (a line written before the open could be flushed by its configuring the tty).
        while await manager.devices().first?.snapshot.connected == false {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await manager.devices().first?.snapshot.waitingReason == nil, "served: no reason left behind")
        #expect(
            try wearable.request(CommandLines.start(date: "2020-03-16T19:45:13Z"))
                .contains(#""status":"ok""#),
            "served once released"
        )
        await manager.drainAll(timeout: .seconds(2))
    }
}
