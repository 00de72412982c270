import WorkoutDaemon
import WorkoutctlCommands

/// One installed binary serves both commands.
///
/// `workoutctl` is a symlink to `workoutd`, and the name the process was started under picks the command. Two binaries
/// would each carry their own copy of the statically linked Swift runtime and Foundation
/// (docs/decisions/0006-multi-call-binary.md).
@main
enum MultiCallEntry {
    /// The basename of argv[0]: what the user typed, whichever directory or symlink it went through.
    static var invokedName: String {
        (CommandLine.arguments.first ?? "workoutd").split(separator: "/").last.map(String.init) ?? "workoutd"
    }

    static func main() async {
        if invokedName == "workoutctl" {
            Workoutctl.main()
        } else {
            await WorkoutdCommand.main()
        }
    }
}
