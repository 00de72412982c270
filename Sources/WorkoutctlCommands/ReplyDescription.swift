import WorkoutProtocol

extension Reply {
    /// A reply in a few words for tables: `workout 3 started`, `invalid_field intensityLevel: …`.
    var summary: String {
        var text: String
        switch outcome {
        case .ok(.workoutStarted(let workoutID)):
            text = "workout \(workoutID) started"
        case .ok(.workoutEnded(let workoutID, let duration)):
            text = "workout \(workoutID) ended after \(Output.duration(duration))"
        case .ok(.workoutShared(let workoutID, let service, let shareID)):
            text = "workout \(workoutID) queued for \(service.rawValue) as share \(shareID)"
        case .error(let error):
            text = error.code.rawValue + (error.field.map { " \($0)" } ?? "") + ": " + error.message
        }
        if replayed { text += " (replayed)" }
        return text
    }

    /// `ok` or `error`, as in the reply's `status`.
    var statusText: String { isSuccess ? "ok" : "error" }

    /// The command type the reply names, when it is a success.
    var commandTypeText: String {
        if case .ok(let ack) = outcome { ack.commandType.rawValue } else { "-" }
    }
}
