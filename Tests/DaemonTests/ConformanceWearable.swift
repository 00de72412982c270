@testable import WorkoutDaemon

/// A wearable's session with the conformance hub and grader, on a clock the test moves.
///
/// No port, no waiting.
///
/// Replies are written in order at their due time, as the session writes them; a line is graded before the
/// answers it causes are delivered.
struct ConformanceWearable {
    var hub = ConformanceHub(maximumLineLength: 4096)
    var grader = ConformanceGrader(maximumLineLength: 4096)
    private var queue: [ConformanceHub.Answer] = []
    /// Every reply delivered so far, as the wearable read it.
    private(set) var received: [String] = []

    /// The wearable sends `line` at `milliseconds`; returns the replies it has by then, in order.
    @discardableResult
    mutating func send(_ line: String, at milliseconds: Int) -> [String] {
        let time = Duration.milliseconds(milliseconds)
        deliver(through: time - .milliseconds(1))
        grader.lineReceived(Array(line.utf8), at: time)
        if let answer = hub.answer(Array(line.utf8), at: time) { queue.append(answer) }
        return deliver(through: time)
    }

    /// A line over the limit, as the framer reports it.
    mutating func sendTooLong(at milliseconds: Int) {
        let time = Duration.milliseconds(milliseconds)
        grader.lineReceived(nil, at: time)
        if let answer = hub.answer(nil, at: time) { queue.append(answer) }
        deliver(through: time)
    }

    /// Delivers every reply due by `time`; returns them.
    @discardableResult
    mutating func deliver(through time: Duration) -> [String] {
        var now: [String] = []
        while let head = queue.first, head.due <= time {
            queue.removeFirst()
            grader.replyDelivered(head.delivered, at: head.due)
            now.append(String(decoding: head.bytes, as: UTF8.self))
        }
        received += now
        return now
    }

    func result(_ rule: ConformanceRule) -> RuleVerdict.Result? {
        grader.verdicts.first { $0.rule == rule }?.result
    }

    func detail(_ rule: ConformanceRule) -> String {
        grader.verdicts.first { $0.rule == rule }?.detail ?? ""
    }

    /// The rules that failed.
    var failed: [ConformanceRule] {
        grader.verdicts.filter { $0.result == .fail }.map(\.rule)
    }

    static func start(_ id: Int) -> String {
        #"{"command_type":"start_workout","location":"Gary's Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5,"id":\#(id)}"#
    }

    static func end(_ id: Int) -> String { #"{"command_type":"end_workout","id":\#(id)}"# }

    static func share(_ id: Int) -> String { #"{"command_type":"share_workout","service":"twitter","id":\#(id)}"# }
}
