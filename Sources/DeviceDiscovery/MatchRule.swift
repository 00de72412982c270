#if canImport(Glibc)
import Glibc
#endif

/// One condition of a match rule.
///
/// The udev property must exist and its value match a shell glob (`fnmatch(3)`, so `WRB-*` and `[0-9]*` work as in a
/// shell).
public struct PropertyCondition: Sendable, Hashable, CustomStringConvertible {
    public var property: String
    public var pattern: String

    public init(property: String, pattern: String) {
        self.property = property
        self.pattern = pattern
    }

    public func holds(for properties: [String: String]) -> Bool {
        guard let value = properties[property] else { return false }
        return fnmatch(pattern, value, 0) == 0
    }

    public var description: String { "\(property)=\(pattern)" }
}

/// A configured rule: space-separated `PROPERTY=glob` conditions that must all hold.
///
/// For example `ID_VENDOR_ID=1209 ID_MODEL_ID=a7e1`.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    public var conditions: [PropertyCondition]

    public init(conditions: [PropertyCondition]) {
        self.conditions = conditions
    }

    /// Parses one rule as written in `discovery.match`.
    public init(parsing text: String) throws(MatchRuleError) {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !tokens.isEmpty else {
            throw MatchRuleError(
                rule: text,
                reason: "the rule is empty; write PROPERTY=glob conditions separated by spaces"
            )
        }
        var conditions: [PropertyCondition] = []
        for token in tokens {
            guard let equals = token.firstIndex(of: "=") else {
                throw MatchRuleError(rule: text, reason: "'\(token)' is not of the form PROPERTY=glob")
            }
            let property = String(token[..<equals])
            let pattern = String(token[token.index(after: equals)...])
            guard !property.isEmpty, property.allSatisfy(Self.isPropertyNameCharacter) else {
                throw MatchRuleError(
                    rule: text,
                    reason: "'\(property)' is not a udev property name (letters, digits and _ only)"
                )
            }
            guard !pattern.isEmpty else {
                throw MatchRuleError(rule: text, reason: "'\(token)' has an empty pattern; use * to match any value")
            }
            conditions.append(PropertyCondition(property: property, pattern: pattern))
        }
        self.conditions = conditions
    }

    public func matches(_ properties: [String: String]) -> Bool {
        conditions.allSatisfy { $0.holds(for: properties) }
    }

    public var description: String { conditions.map(\.description).joined(separator: " ") }

    private static func isPropertyNameCharacter(_ character: Character) -> Bool {
        character == "_" || (character.isASCII && (character.isLetter || character.isNumber))
    }
}

/// Why a `discovery.match` rule was rejected; `rule` is the text as configured.
public struct MatchRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    public var rule: String
    public var reason: String

    public var description: String { "discovery.match rule \"\(rule)\": \(reason)" }
}
