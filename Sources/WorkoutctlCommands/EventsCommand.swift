import ArgumentParser
import ControlProtocol
import Foundation
import WorkoutProtocol

/// `workoutctl events`: follow the daemon's event stream until interrupted.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Follow events as they happen: devices, commands, replies, workouts, shares. Ctrl-C to stop."
    )

    @OptionGroup var options: GlobalOptions

    /// Fixed widths, since a stream cannot be measured before it is printed.
    private static let columns: [(header: String, width: Int)] = [
        ("SEQ", 6), ("TIME", 20), ("EVENT", 16), ("DEVICE", 20), ("DETAIL", 0),
    ]

    func run() {
        // Ctrl-C ends the stream even when the parent started it with SIGINT ignored or blocked
        // (a script's background job, a test harness).
        signal(SIGINT, SIG_DFL)
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        sigprocmask(SIG_UNBLOCK, &interrupt, nil)
        let connection = options.connect()
        let _: Subscription = connection.result(.subscribe)
        // Unbuffered writes, so a follower in a pipe sees each event as it happens.
        if !options.json { Output.text(Self.row(Self.columns.map(\.header)) + "\n") }
        do {
            while let event = try connection.nextEvent() {
                if options.json {
                    Output.json(event)
                } else {
                    Output.text(
                        Self.row([
                            "\(event.sequence)", TableDate.format(event.time), event.detail.type.rawValue,
                            event.detail.device, Self.detail(event.detail),
                        ]) + "\n"
                    )
                }
            }
            Failure(.failed("workoutd closed the event stream")).report()
        } catch {
            Failure(error).report()
        }
    }

    /// One line of cells, each escaped.
    ///
    /// An event carries device input (ids, locations, error messages quoting it).
    private static func row(_ cells: [String]) -> String {
        cells.map { UntrustedText.escaped($0) }.enumerated().map { index, cell in
            let padding = String(repeating: " ", count: max(0, columns[index].width - cell.count))
            if index == 0 { return padding + cell }
            return index == cells.count - 1 ? cell : cell + padding
        }.joined(separator: "  ")
    }

    private static func detail(_ detail: ControlEvent.Detail) -> String {
        switch detail {
        case .deviceAdded(_, let node), .deviceRemoved(_, let node):
            "node \(node)"
        case .commandReceived(_, let commandType, let id, let origin):
            [
                commandType?.rawValue ?? "(invalid line)", id.map { "id \($0)" },
                origin == .control ? "via control socket" : nil,
            ]
            .compactMap { $0 }.joined(separator: " ")
        case .replySent(_, let reply, let origin):
            [
                reply.statusText, reply.id.map { "id \($0)" }, reply.summary,
                origin == .control ? "via control socket" : nil,
            ]
            .compactMap { $0 }.joined(separator: " ")
        case .workoutStarted(let workout):
            "workout \(workout.id) at \(workout.location), intensity \(workout.intensityLevel)"
        case .workoutEnded(let workout):
            "workout \(workout.id) after \(Output.duration(workout.durationSeconds))"
        case .shareQueued(let share), .shareDelivered(let share):
            "share \(share.id) of workout \(share.workoutID) to \(share.service.rawValue)"
        case .shareFailed(let share, let error):
            "share \(share.id) to \(share.service.rawValue): \(error)"
        case .storageFailed(_, let reason):
            reason
        }
    }
}
