/// How one rule came out of a session, with what the report says about it.
struct RuleVerdict: Sendable, Equatable {
    enum Result: String, Sendable, Codable {
        case pass = "PASS"
        case fail = "FAIL"
        /// The wearable never did what the rule is judged on (for example it sent no retry).
        case notTested = "NOT TESTED"
    }

    var rule: ConformanceRule
    var result: Result
    /// What the report says of the rule.
    ///
    /// The first violation for a failure, what was judged for a pass, what never happened for an untested rule.
    var detail: String
}
