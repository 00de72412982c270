import Foundation
import WorkoutProtocol
import WorkoutdTesting

/// The load: start/end/share cycles, each command with a fresh id, all valid, as a wearable sends them.
///
/// Ids alternate between integers and strings so both echo paths are exercised; locations, dates,
/// intensities and services vary so no reply is a repeat of the one before.
struct CommandMix {
    /// One command on the wire and what its reply must say.
    struct Entry {
        var line: [UInt8]
        var id: CommandID
        var type: CommandType
    }

    static let cycleLength = 3
    private static let locations = ["Gary's Gym", "Riverside Park", "Pool — lane 4", "Home", "Track \"B\""]
    private static let firstDate = Date(timeIntervalSince1970: 1_584_387_913)  // 2020-03-16 19:45:13 +0000

    private var nextID: Int64 = 1

    /// `count` rounded up to whole cycles, so every run leaves the session idle with a workout to share.
    static func wholeCycles(_ count: Int) -> Int {
        (count + cycleLength - 1) / cycleLength * cycleLength
    }

    /// The next `count` commands (rounded up to whole cycles).
    mutating func next(_ count: Int) -> [Entry] {
        var entries: [Entry] = []
        entries.reserveCapacity(Self.wholeCycles(count))
        while entries.count < count {
            let cycle = Int(nextID / Int64(Self.cycleLength))
            let workout = Workout(
                location: Self.locations[cycle % Self.locations.count],
                date: Self.firstDate.addingTimeInterval(Double(cycle) * 3600),
                intensityLevel: cycle % 10 + 1
            )
            let service = ShareService.allCases[cycle % ShareService.allCases.count]
            for command in [Command.startWorkout(workout), .endWorkout, .shareWorkout(service)] {
                let id: CommandID = nextID.isMultiple(of: 2) ? .integer(nextID) : .string("w-\(nextID)")
                nextID += 1
                let line = SimulatedWearable.line(for: command, id: id) + "\n"
                entries.append(Entry(line: Array(line.utf8), id: id, type: command.type))
            }
        }
        return entries
    }
}
