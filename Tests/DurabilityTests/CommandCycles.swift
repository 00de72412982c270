import WorkoutProtocol
import WorkoutdTesting

/// One command of a load: the id the wearable gave it and the line it sent.
struct LoadCommand: Sendable {
    var id: CommandID
    var type: CommandType
    var line: String
}

/// A wearable's busy day: `count` cycles of start, end and share, every command with its own id.
///
/// Cycle `n` uses ids `start-n`, `end-n` and `share-n`, so a stored row names the command that made it.
enum CommandCycles {
    static func make(_ count: Int, location: String = "Gym") -> [LoadCommand] {
        (0..<count).flatMap { n -> [LoadCommand] in
            let intensity = n % 10 + 1
            return [
                LoadCommand(
                    id: .string("start-\(n)"),
                    type: .startWorkout,
                    line: CommandLines.start(id: "start-\(n)", location: "\(location) \(n)", intensity: intensity)
                ),
                LoadCommand(id: .string("end-\(n)"), type: .endWorkout, line: CommandLines.end(id: "end-\(n)")),
                LoadCommand(id: .string("share-\(n)"), type: .shareWorkout, line: CommandLines.share(id: "share-\(n)")),
            ]
        }
    }
}
