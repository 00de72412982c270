/// The numbered rules `workoutd conformance` grades a wearable against.
///
/// The numbers and their anchors in docs/protocol.md ("Conformance rules") are what a maker reads in a report
/// and looks up: never renumber one.
enum ConformanceRule: String, CaseIterable, Codable, Sendable, Comparable {
    case r1 = "R1"
    case r2 = "R2"
    case r3 = "R3"
    case r4 = "R4"
    case r5 = "R5"
    case r6 = "R6"

    /// The rule in a few words, as the report prints it.
    var title: String {
        switch self {
        case .r1: "every line is JSON within the line limit"
        case .r2: "ids are unique per command"
        case .r3: "a retry carries the same id and the same bytes"
        case .r4: "retry_after_ms is honoured"
        case .r5: "errors are handled without a flood"
        case .r6: "single flight: no command before the earlier one is answered"
        }
    }

    /// Where the rule and how it is judged are written down.
    var reference: String { "docs/protocol.md#\(rawValue.lowercased())" }

    static func < (lhs: ConformanceRule, rhs: ConformanceRule) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
