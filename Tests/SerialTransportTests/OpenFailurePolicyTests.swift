import Glibc
import SerialTransport
import Testing

/// What the daemon does when a discovered node will not open.
///
/// The decision behind the log lines a user sees ("device refuses to open" with a hint, or "giving up on device").
@Suite("Open failures")
struct OpenFailurePolicyTests {
    let policy = OpenFailurePolicy(
        ReconnectPolicy(
            initialDelay: .milliseconds(1),
            maximumDelay: .milliseconds(500),
            giveUpAfter: .seconds(10),
            reopenAfterClose: false,
            refusedRetryDelay: .seconds(5)
        )
    )

    @Test("within the give-up time every failure is retried quietly, with growing delays")
    func quietRetries() {
        #expect(
            policy.decide(errno: EPERM, attempt: 0, failingFor: .zero, nodeExists: true, reported: false)
                == .retry(delay: .milliseconds(1), report: false)
        )
        #expect(
            policy.decide(errno: ENOENT, attempt: 3, failingFor: .seconds(1), nodeExists: false, reported: false)
                == .retry(delay: .milliseconds(8), report: false)
        )
        #expect(
            policy.decide(errno: EACCES, attempt: 20, failingFor: .seconds(9), nodeExists: true, reported: false)
                == .retry(delay: .milliseconds(500), report: false)
        )
    }

    @Test(
        "a refused node that still exists is never given up on: reported once, then retried at the capped delay",
        arguments: [EPERM, EACCES]
    )
    func refusalKeepsRetrying(errno: Int32) {
        #expect(
            policy.decide(errno: errno, attempt: 40, failingFor: .seconds(10), nodeExists: true, reported: false)
                == .retry(delay: .seconds(5), report: true)
        )
        #expect(
            policy.decide(errno: errno, attempt: 41, failingFor: .seconds(3600), nodeExists: true, reported: true)
                == .retry(delay: .seconds(5), report: false)
        )
    }

    @Test("past the give-up time, a vanished node or another error gives up")
    func givesUp() {
        #expect(
            policy.decide(errno: EPERM, attempt: 40, failingFor: .seconds(10), nodeExists: false, reported: false)
                == .giveUp
        )
        #expect(
            policy.decide(errno: EIO, attempt: 40, failingFor: .seconds(11), nodeExists: true, reported: false)
                == .giveUp
        )
    }

    @Test("without a give-up time (configured devices) nothing is ever given up or reported")
    func configuredDevices() {
        let forever = OpenFailurePolicy(ReconnectPolicy(maximumDelay: .seconds(2)))
        #expect(
            forever.decide(errno: EPERM, attempt: 50, failingFor: .seconds(86_400), nodeExists: true, reported: false)
                == .retry(delay: .seconds(2), report: false)
        )
    }

    @Test("the hint names the cause: the device cgroup for EPERM, the node's mode and group for EACCES")
    func hints() {
        #expect(OpenFailurePolicy.hint(errno: EPERM).contains("DeviceAllow"))
        #expect(OpenFailurePolicy.hint(errno: EACCES).contains("GROUP=\"workoutd-wearable\""))
        #expect(OpenFailurePolicy.hint(errno: EACCES).contains("'usermod -aG workoutd-wearable "))
    }
}
