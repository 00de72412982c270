/// Decides which ttys are ours: a device with a node that satisfies any configured rule.
/// Anything else — modems, `ttyS*`, other people's adapters — is never opened.
public struct DeviceMatcher: Sendable, Hashable {
    /// What `discovery.match` holds when the configuration does not set it.
    ///
    /// The property set by the project's udev rule (`udev/60-workoutd.rules`).
    public static let defaultRules = ["WORKOUTD_DEVICE=1"]

    /// ``defaultRules``, parsed.
    public static let standard = DeviceMatcher(rules: [
        MatchRule(conditions: [PropertyCondition(property: "WORKOUTD_DEVICE", pattern: "1")])
    ])

    public var rules: [MatchRule]

    public init(rules: [MatchRule]) {
        self.rules = rules
    }

    /// Parses `discovery.match`; the error names the first bad rule.
    public init(parsing texts: [String] = DeviceMatcher.defaultRules) throws(MatchRuleError) {
        guard !texts.isEmpty else {
            throw MatchRuleError(
                rule: "",
                reason:
                    "discovery.match is empty, so no device could ever match; set discovery.enabled: false to turn discovery off"
            )
        }
        var rules: [MatchRule] = []
        for text in texts {
            rules.append(try MatchRule(parsing: text))
        }
        self.rules = rules
    }

    /// The first rule `device` satisfies, or `nil` when it is not ours.
    public func firstMatch(_ device: DiscoveredDevice) -> MatchRule? {
        guard device.devnode != nil else { return nil }
        return rules.first { $0.matches(device.properties) }
    }
}
