/// A configuration value that cannot be used.
///
/// The daemon exits with status 78 (EX_CONFIG) and this sentence.
struct ConfigurationError: Error, CustomStringConvertible {
    var key: String
    var problem: String
    /// The file and line the key is on, when it came from the file.
    var file: String?
    var line: Int?

    var description: String {
        let place = file.map { "\($0)" + (line.map { ":\($0)" } ?? "") + ": " } ?? ""
        return "\(place)configuration key '\(key)': \(problem)"
    }

    /// The exit status sysexits(3) reserves for configuration errors.
    static let exitStatus: Int32 = 78
}

/// Every configuration error one run found, in the file's order; thrown when there is at least one.
struct ConfigurationErrors: Error, CustomStringConvertible {
    var errors: [ConfigurationError]

    /// One error a line.
    var description: String { errors.map(\.description).joined(separator: "\n") }

    /// Each error as a line of its own, prefixed `workoutd: `.
    ///
    /// `priority` (`<3>` for the journal, or empty) comes first on each line.
    func lines(priority: String) -> String {
        errors.map { "\(priority)workoutd: \($0)\n" }.joined()
    }
}
