import ArgumentParser

/// `workoutctl`: see and steer the running workoutd through its control socket.
@main
struct WorkoutctlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workoutctl",
        abstract: "See and steer the running workoutd through its control socket.",
        discussion: """
            Human output is an aligned table with a header; --json prints one JSON object per line.
            Exits 69 when workoutd is not running, 1 when it refuses a request.
            """,
        subcommands: [
            StatusCommand.self, DevicesCommand.self, WorkoutsCommand.self, SharesCommand.self,
            EventsCommand.self, SendCommand.self, MetricsCommand.self,
        ]
    )

    @OptionGroup var options: GlobalOptions
}
