import ArgumentParser
import Foundation

/// `workoutd configuration-keys`: the table of configuration keys as JSON, for the manual and its test.
///
/// Hidden from `--help`: scripts/man-pages.py writes `workoutd.yaml(5)` from it at package build, so the manual
/// lists exactly the keys the configuration check knows, with their defaults and whether a reload applies them.
struct ConfigurationKeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "configuration-keys",
        abstract: "Print every configuration key as JSON (for the manual workoutd.yaml(5)).",
        shouldDisplay: false
    )

    /// One key as the manual shows it.
    struct Entry: Codable {
        var name: String
        var type: String
        var reload: Bool
        var defaultValue: String
        var summary: String
        var environment: String
        /// What a `*` in `name` stands for.
        var wildcard: [String]?
    }

    static var entries: [Entry] {
        ConfigurationKeys.all.map { key in
            let wildcard = key.name.contains("*") ? ConfigurationKeys.wildcardNames : nil
            return Entry(
                name: key.name,
                type: "\(key.kind)",
                reload: key.reload == .live,
                defaultValue: key.defaultValue,
                summary: key.summary,
                environment: ConfigurationKeys.environmentVariable(for: key.name),
                wildcard: wildcard
            )
        }
    }

    func run() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Self.entries)
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}
