import ControlProtocol
import Foundation
import Testing
import WorkoutProtocol
import WorkoutdTesting

#if canImport(Glibc)
import Glibc
#endif

/// The control socket by peer credentials (SO_PEERCRED), whatever the socket file's mode.
///
/// Root and the daemon's user may do everything, members of `control_socket_group` may read, anyone else is refused.
/// Run as root: the clients are started as other users with setpriv.
@Suite(
    .serialized,
    .enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
        "needs root and setpriv"
    ),
    .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")
)
struct ControlSocketAccessTests {
    /// A group with a member in the group database (Debian's postgresql package puts postgres in ssl-cert).
    static let readerGroup = "ssl-cert"
    static let databaseMember = "postgres"

    /// `workoutctl --socket <daemon's socket> arguments…` run as `user` with primary group `group`.
    ///
    /// It runs with no supplementary groups.
    private func ctl(
        _ daemon: ControlledDaemon,
        as user: String,
        group: String,
        _ arguments: [String]
    ) throws -> Workoutctl.Output {
        try Workoutctl.run(
            [
                "--reuid=\(user)", "--regid=\(group)", "--clear-groups", try Workoutctl.binaryPath(), "--socket",
                daemon.socket,
            ] + arguments,
            binary: "/usr/bin/setpriv"
        )
    }

    private func daemonWithOpenSocket(devices: [String]) throws -> ControlledDaemon {
        let daemon = try ControlledDaemon(
            devices: devices,
            configuration: "log_level: info\ncontrol_socket_group: \(Self.readerGroup)\n"
        )
        // Anyone may connect at the file level: only the credentials decide.
        #expect(chmod(daemon.socket, 0o666) == 0)
        return daemon
    }

    @Test func nobodyIsRefusedThoughTheSocketIs0666() throws {
        let wearable = try SimulatedWearable()
        let daemon = try daemonWithOpenSocket(devices: [wearable.devicePath])
        try daemon.waitUntilConnected(wearable.devicePath)
        for arguments in [
            ["status"], ["devices"], ["workouts"], ["shares"], ["metrics"],
            ["send", "--device", wearable.devicePath, CommandLines.start()],
        ] {
            let refused = try ctl(daemon, as: "nobody", group: "nogroup", arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.stdout)\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(
                refused.stderr.contains("permission denied: uid 65534 may not use the control socket"),
                "\(refused.stderr)"
            )
            #expect(refused.stderr.contains("(permission_denied)"), "\(refused.stderr)")
        }
        // The refused send ran nothing.
        #expect(try daemon.ctl(["workouts", "--json"]).stdout.isEmpty)
        #expect(daemon.daemon.log.contains("refusing control client: permission denied"))
        #expect(daemon.daemon.log.contains("uid=65534"), "\(daemon.daemon.log)")
    }

    @Test func nobodyCannotFollowTheEventStream() throws {
        let daemon = try daemonWithOpenSocket(devices: [])
        let refused = try ctl(daemon, as: "nobody", group: "nogroup", ["events"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("permission denied"), "\(refused.stderr)")
    }

    @Test func aReaderGroupMemberMayReadButNotSend() throws {
        let wearable = try SimulatedWearable()
        let daemon = try daemonWithOpenSocket(devices: [wearable.devicePath])
        try daemon.waitUntilConnected(wearable.devicePath)
        #expect(try daemon.ctl(["send", "--device", wearable.devicePath, CommandLines.start()]).status == 0)

        // Member by primary group.
        for arguments in [["status"], ["devices"], ["workouts"], ["shares"], ["metrics"]] {
            let read = try ctl(daemon, as: "nobody", group: Self.readerGroup, arguments)
            #expect(read.status == 0, "\(arguments): \(read.stderr)")
        }
        let devices = try ctl(daemon, as: "nobody", group: Self.readerGroup, ["devices"])
        #expect(devices.stdout.contains(wearable.devicePath))
        let workouts = try ctl(daemon, as: "nobody", group: Self.readerGroup, ["workouts", "--json"])
        #expect(workouts.lines.count == 1, "\(workouts.stdout)")

        let send = try ctl(
            daemon,
            as: "nobody",
            group: Self.readerGroup,
            ["send", "--device", wearable.devicePath, CommandLines.end()]
        )
        #expect(send.status == 1)
        #expect(
            send.stderr.contains(
                "permission denied: send needs root or the daemon's user (uid 0); uid 65534 may only read"
            ),
            "\(send.stderr)"
        )
        #expect(
            try daemon.ctlJSON(["workouts"], as: WorkoutRecord.self).map(\.endedAt) == [nil],
            "the refused end ran nothing"
        )

        // Member through the group database (its session's groups cleared): the group as /etc/group lists it.
        if let members = getgrnam(Self.readerGroup)?.pointee.gr_mem, Self.listed(Self.databaseMember, in: members) {
            let read = try ctl(daemon, as: Self.databaseMember, group: Self.databaseMember, ["status"])
            #expect(read.status == 0, "\(read.stderr)")
            let send = try ctl(
                daemon,
                as: Self.databaseMember,
                group: Self.databaseMember,
                ["send", "--device", wearable.devicePath, CommandLines.end()]
            )
            #expect(send.status == 1)
            #expect(send.stderr.contains("may only read"))
        }
    }

    @Test func rootMayDoEverything() throws {
        let wearable = try SimulatedWearable()
        let daemon = try daemonWithOpenSocket(devices: [wearable.devicePath])
        try daemon.waitUntilConnected(wearable.devicePath)
        for arguments in [["status"], ["devices"], ["workouts"], ["shares"], ["metrics"]] {
            #expect(try daemon.ctl(arguments).status == 0, "\(arguments)")
        }
        let sent = try daemon.ctl(["send", "--device", wearable.devicePath, CommandLines.start()])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.contains("started"))
    }

    private static func listed(_ name: String, in members: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Bool {
        var index = 0
        while let member = members[index] {
            if String(cString: member) == name { return true }
            index += 1
        }
        return false
    }
}
