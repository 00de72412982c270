import Foundation
import Yams

/// Checks a configuration file and the `WORKOUTD_*` environment against `ConfigurationKeys`.
///
/// It runs before any value is read, so a typo stops the start (exit 78) instead of leaving a default in force.
///
/// The YAML is walked with its source positions, so each problem names the file, the line and the key.
struct ConfigurationCheck {
    /// Where each key was found in the file, so value errors found later can name their line too.
    private(set) var lines: [String: Int] = [:]
    /// Every unknown key and value of the wrong shape, in the file's order.
    private(set) var problems: [ConfigurationError] = []
    let file: String

    /// Checks the YAML `text` read from `file`; collects what is wrong in `problems`.
    ///
    /// Throws only when the text is not YAML.
    init(yaml text: String, file: String) throws {
        self.file = file
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigurationError(key: "--config", problem: "\(file) is not valid YAML: \(error)")
        }
        guard let root, root.null == nil else { return }
        walk(root, path: "")
    }

    /// Every `WORKOUTD_*` variable that names no known key.
    static func checkEnvironment(_ environment: [String: String]) -> [ConfigurationError] {
        var problems: [ConfigurationError] = []
        let known = Dictionary(
            ConfigurationKeys.expanded.map { (ConfigurationKeys.environmentVariable(for: $0.name), $0.name) }
        ) { first, _ in first }
        for variable in environment.keys.sorted() where variable.hasPrefix(DaemonConfiguration.environmentPrefix) {
            guard known[variable] == nil else { continue }
            var problem = "unknown environment variable"
            if let nearest = ConfigurationKeys.nearest(to: variable, among: Array(known.keys)) {
                problem += "; did you mean \(nearest) (\(known[nearest] ?? ""))?"
            }
            problems.append(ConfigurationError(key: variable, problem: problem))
        }
        return problems
    }

    private mutating func walk(_ node: Node, path: String) {
        guard case .mapping(let mapping) = node else {
            problems.append(
                located(path.isEmpty ? "(top level)" : path, node, "must be a section of keys (key: value lines)")
            )
            return
        }
        for (keyNode, value) in mapping {
            let name = keyNode.string ?? ""
            let full = path.isEmpty ? name : path + "." + name
            lines[full] = keyNode.mark?.line
            if case .mapping = value, ConfigurationKeys.isSection(full) {
                walk(value, path: full)
            } else if let key = ConfigurationKeys.key(named: full) {
                // A key that is also a section (`devices`: a list, or `paths:` and `allowed_serials:`).
                if let problem = checkType(value, of: key, name: full) { problems.append(problem) }
            } else if ConfigurationKeys.isSection(full) {
                if value.null != nil { continue }
                walk(value, path: full)
            } else {
                problems.append(located(full, keyNode, unknownProblem(name, under: path)))
            }
        }
    }

    private func unknownProblem(_ name: String, under section: String) -> String {
        let isService = section == "shares"
        var problem =
            isService
            ? "unknown share service (known: \(ConfigurationKeys.wildcardNames.joined(separator: ", ")))"
            : "unknown key"
        if let nearest = ConfigurationKeys.nearest(to: name, among: ConfigurationKeys.children(of: section)) {
            problem += "; did you mean '\(section.isEmpty ? nearest : section + "." + nearest)'?"
        } else if !isService, case let elsewhere = ConfigurationKeys.elsewhere(name, outside: section),
            !elsewhere.isEmpty
        {
            // A key indented under the wrong section, or not indented at all (`listen:` for `web.listen`).
            let places = elsewhere.map { "'\($0)'" }
            problem +=
                places.count == 1
                ? "; did you mean \(places[0]) (check its indentation)?"
                : "; did you mean one of \(places.joined(separator: ", ")) (check its indentation)?"
        }
        return problem
    }

    private func checkType(_ value: Node, of key: ConfigurationKey, name: String) -> ConfigurationError? {
        if value.null != nil, key.kind != .integer && key.kind != .boolean { return nil }
        let fits: Bool
        switch (key.kind, value) {
        case (.list, .sequence(let items)):
            fits = items.allSatisfy { if case .scalar = $0 { true } else { false } }
        case (.string, .scalar):
            fits = true
        case (.integer, .scalar(let scalar)):
            fits = Int(scalar.string.trimmingCharacters(in: .whitespaces)) != nil
        case (.boolean, .scalar(let scalar)):
            fits = ["true", "false", "yes", "no", "on", "off"].contains(scalar.string.lowercased())
        default:
            fits = false
        }
        return fits ? nil : located(name, value, "must be \(key.kind.expectation); got \(Self.describe(value))")
    }

    private func located(_ key: String, _ node: Node, _ problem: String) -> ConfigurationError {
        ConfigurationError(key: key, problem: problem, file: file, line: node.mark?.line)
    }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): "'\(scalar.string)'"
        case .mapping: "a section"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    /// Adds the file and line of `error.key` when the file set it.
    func locate(_ error: ConfigurationError) -> ConfigurationError {
        guard error.line == nil, let line = lines[error.key] else { return error }
        var located = error
        located.file = file
        located.line = line
        return located
    }
}
