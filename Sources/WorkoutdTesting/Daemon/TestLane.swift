import Foundation

/// Which tests a run includes: `make check` sets `WORKOUTD_TEST_LANE=check`, `make test` runs them all.
///
/// Suites that start a `workoutd` process, a database server or a VM say
/// `.enabled(if: TestLane.runsLiveDaemons, …)`; bodies that run in either mode take `DaemonTestMode.inLane`.
public enum TestLane: String, Sendable {
    /// The fast lane: unit tests and the daemon in process; nothing is booted.
    case check
    /// Every test.
    case full

    public static let current: TestLane =
        ProcessInfo.processInfo.environment["WORKOUTD_TEST_LANE"].flatMap(TestLane.init(rawValue:)) ?? .full

    /// Whether tests that start a `workoutd` process run in this lane.
    public static var runsLiveDaemons: Bool { current == .full }
}

extension DaemonTestMode {
    /// The modes this lane runs a two-mode test body in: in process always, live outside the fast lane.
    public static var inLane: [DaemonTestMode] {
        TestLane.runsLiveDaemons ? allCases : [.inProcess]
    }
}
