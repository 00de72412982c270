import Foundation
import Testing
import WorkoutdTesting

/// `workoutctl` against a socket path where no daemon listens.
@Suite struct NotRunningTests {
    @Test func saysTheDaemonIsNotRunningAndFails() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("absent-\(UUID().uuidString).sock")
            .path
        let result = try Workoutctl.run(["--socket", path, "status"])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "workoutctl: workoutd is not running (no socket at \(path))\n")
    }
}
