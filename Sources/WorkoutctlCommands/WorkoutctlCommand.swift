import ArgumentParser
import WorkoutProtocol

/// `workoutctl`: see and steer the running workoutd through its control socket.
struct WorkoutctlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workoutctl",
        abstract: "See and steer the running workoutd through its control socket.",
        discussion: """
            Human output is an aligned table with a header; --json prints one JSON object per line. \
            Times are UTC to the second (2026-11-28 07:50:15Z), durations read 12 s, 3 min 05 s, 1 h 02 min; \
            on a terminal, long cells are cut with … to its width (a pipe or file gets them whole).
            Exit status: 0 success; 1 workoutd refused the request, or `send` got an error reply; \
            2 `send` named a device that is not connected; 64 bad usage; 69 workoutd is not running.
            """,
        version: WorkoutdVersion.current,
        subcommands: [
            StatusCommand.self, DevicesCommand.self, WorkoutsCommand.self, SharesCommand.self, DiagnoseCommand.self,
            EventsCommand.self, SendCommand.self, MetricsCommand.self, LabelCommand.self,
        ]
    )

    @OptionGroup var options: GlobalOptions
}

/// Runs `workoutctl` with this process's arguments.
///
/// The entry point of the `workoutctl` executable, and of `workoutd` when it is invoked under the name `workoutctl`.
public enum Workoutctl {
    public static func main() {
        WorkoutctlCommand.main()
    }
}
