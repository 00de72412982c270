import Glibc
import Testing
import WorkoutdTesting

@testable import SerialTransport

/// A node that will not open, as the log shows it.
///
/// One line per reason, retries with growing delays, and a give-up only where the policy says so.
@Suite("Device open attempts")
struct DeviceOpenAttemptsTests {
    let policy = ReconnectPolicy(
        initialDelay: .milliseconds(10),
        maximumDelay: .milliseconds(40),
        giveUpAfter: .seconds(10),
        reopenAfterClose: true,
        refusedRetryDelay: .seconds(5)
    )
    let start = ContinuousClock.now

    func missing() -> SerialPortError { SerialPortError(path: "/dev/ttyACM9", operation: "open", errno: ENOENT) }

    @Test("a node that keeps failing the same way is one notice line, retried with growing delays")
    func oneLinePerReason() {
        let log = CapturedLog()
        var attempts = DeviceOpenAttempts()
        var delays: [DeviceOpenAttempts.Next] = []
        for second in 0..<4 {
            delays.append(
                attempts.openFailed(
                    missing(),
                    policy: policy,
                    nodeExists: false,
                    now: start + .seconds(second),
                    logger: log.logger()
                )
            )
        }
        #expect(
            delays == [
                .retry(after: .milliseconds(10)), .retry(after: .milliseconds(20)), .retry(after: .milliseconds(40)),
                .retry(after: .milliseconds(40)),
            ]
        )
        #expect(log.lines.filter { $0.level == .notice }.map(\.message) == ["device not openable yet; retrying"])
        #expect(attempts.opened(logger: log.logger()) == "open failed: No such file or directory (4 times)")
    }

    @Test("past the give-up time a vanished node is given up on, and a new reason is a new line naming the old")
    func giveUpAndNewReason() {
        let log = CapturedLog()
        var attempts = DeviceOpenAttempts()
        _ = attempts.openFailed(missing(), policy: policy, nodeExists: false, now: start, logger: log.logger())
        let busy = SerialPortError(path: "/dev/ttyACM9", operation: "open", errno: EIO)
        _ = attempts.openFailed(busy, policy: policy, nodeExists: true, now: start + .seconds(1), logger: log.logger())
        #expect(log.lines.last?.metadata["previous"] == "open failed: No such file or directory (1 times)")
        let next = attempts.openFailed(
            missing(),
            policy: policy,
            nodeExists: false,
            now: start + .seconds(11),
            logger: log.logger()
        )
        #expect(next == .giveUp)
        #expect(log.lines.last?.level == .error)
    }

    @Test("a refused node is reported once at error and retried; opening again says so and starts afresh")
    func refusalReportedOnce() {
        let log = CapturedLog()
        var attempts = DeviceOpenAttempts()
        let refused = SerialPortError(path: "/dev/ttyACM9", operation: "open", errno: EACCES)
        for second in [0, 11, 12] {
            _ = attempts.openFailed(
                refused,
                policy: policy,
                nodeExists: true,
                now: start + .seconds(second),
                logger: log.logger()
            )
        }
        #expect(log.lines.filter { $0.level == .error }.count == 1)
        let warnings = log.lines.filter { $0.level == .warning }
        #expect(warnings.count == 1, "the first refusal is a warning at once, and only once")
        #expect(warnings.first?.message.hasPrefix("device refuses to open: permission denied") == true)
        #expect(warnings.first?.message.contains("usermod -aG workoutd-wearable ") == true)
        #expect(log.lines.filter { $0.level == .notice }.isEmpty, "no quieter line repeats it")
        _ = attempts.opened(logger: log.logger())
        #expect(log.lines.last?.message == "device opens again after being refused")
        #expect(attempts.pipelineFailed(policy: policy) == .milliseconds(10))
    }
}
