import ControlProtocol
import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

/// One binary serves both commands.
///
/// The installed `workoutctl` is a symlink to `workoutd` (mk/install.mk), and the name a process is started under picks
/// the command.
@Suite struct MultiCallTests {
    /// A symlink named `name` to the built workoutd, in a scratch directory of its own.
    private func workoutd(linkedAs name: String) throws -> (link: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "multicall-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let link = directory.appendingPathComponent(name).path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: try DaemonProcess.binaryPath())
        return (link, directory)
    }

    @Test func workoutdStartedAsWorkoutctlIsWorkoutctl() async throws {
        let (link, directory) = try workoutd(linkedAs: "workoutctl")
        defer { try? FileManager.default.removeItem(at: directory) }

        let help = try Workoutctl.run(["--help"], binary: link)
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: workoutctl"), "\(help.stdout)")
        #expect(help.stdout == (try Workoutctl.run(["--help"])).stdout, "the same help as the workoutctl executable")

        try await DaemonTestHarness.run(.inProcess) { daemon in
            let status = try Workoutctl.run(["--socket", daemon.socket, "status", "--json"], binary: link)
            #expect(status.status == 0, "\(status.stderr)")
            let report = try #require(
                status.lines.first.map {
                    try ControlSocket.makeDecoder().decode(StatusReport.self, from: Data($0.utf8))
                }
            )
            #expect(report.devicesAttached == 0)
            #expect(report.pid > 0)
        }

        let absent = directory.appendingPathComponent("absent.sock").path
        let notRunning = try Workoutctl.run(["--socket", absent, "status"], binary: link)
        #expect(notRunning.status != 0)
        #expect(notRunning.stderr == "workoutctl: workoutd is not running (no socket at \(absent))\n")
    }

    @Test func bothCommandsAnswerVersionWithTheSameVersion() throws {
        let (link, directory) = try workoutd(linkedAs: "workoutctl")
        defer { try? FileManager.default.removeItem(at: directory) }
        let expected = "\(WorkoutdVersion.current)\n"
        for (name, binary) in [
            ("workoutd", try DaemonProcess.binaryPath()), ("workoutctl", try Workoutctl.binaryPath()),
            ("workoutd as workoutctl", link),
        ] {
            let version = try Workoutctl.run(["--version"], binary: binary)
            #expect(version.status == 0, "\(name) --version: \(version.stderr)")
            #expect(version.stdout == expected, "\(name) --version")
        }
    }

    @Test func workoutdUnderAnyOtherNameIsWorkoutd() throws {
        let (link, directory) = try workoutd(linkedAs: "workoutd-renamed")
        defer { try? FileManager.default.removeItem(at: directory) }
        let help = try Workoutctl.run(["--help"], binary: link)
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: workoutd"), "\(help.stdout)")
        #expect(!help.stdout.contains("USAGE: workoutctl"), "\(help.stdout)")
    }
}
