import Foundation

/// An expected reply line from a transcript.
///
/// JSON whose string values `"$any"`, `"$number"` and `"$string"` stand for any value, any number and any string (for
/// values that depend on timing). Everything else must be equal, and objects must have exactly the same keys.
struct ReplyPattern: CustomStringConvertible {
    let pattern: JSONValue
    let text: String

    init(_ text: String) throws {
        self.text = text
        pattern = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    var description: String { text }

    /// Why `line` does not match, or nil when it does.
    func mismatch(_ line: String) -> String? {
        guard let actual = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else {
            return "the reply is not JSON"
        }
        return Self.mismatch(pattern, actual, path: "")
    }

    private static func mismatch(_ expected: JSONValue, _ actual: JSONValue, path: String) -> String? {
        switch (expected, actual) {
        case (.string("$any"), _):
            return nil
        case (.string("$number"), .integer), (.string("$number"), .double):
            return nil
        case (.string("$string"), .string):
            return nil
        case (.object(let expectedMembers), .object(let actualMembers)):
            let missing = Set(expectedMembers.keys).subtracting(actualMembers.keys).sorted()
            let extra = Set(actualMembers.keys).subtracting(expectedMembers.keys).sorted()
            if !missing.isEmpty || !extra.isEmpty {
                return "at '\(path)': missing keys \(missing), unexpected keys \(extra)"
            }
            for key in expectedMembers.keys.sorted() {
                if let problem = mismatch(
                    expectedMembers[key] ?? .null,
                    actualMembers[key] ?? .null,
                    path: path.isEmpty ? key : "\(path).\(key)"
                ) {
                    return problem
                }
            }
            return nil
        case (.array(let expectedItems), .array(let actualItems)) where expectedItems.count == actualItems.count:
            for (index, pair) in zip(expectedItems, actualItems).enumerated() {
                if let problem = mismatch(pair.0, pair.1, path: "\(path)[\(index)]") { return problem }
            }
            return nil
        default:
            return expected == actual ? nil : "at '\(path)': expected \(expected), got \(actual)"
        }
    }
}
