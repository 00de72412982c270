/// A configuration value that cannot be used; the daemon exits with status 78 (EX_CONFIG) and this sentence.
struct ConfigurationError: Error, CustomStringConvertible {
    var key: String
    var problem: String

    var description: String { "configuration key '\(key)': \(problem)" }

    /// The exit status sysexits(3) reserves for configuration errors.
    static let exitStatus: Int32 = 78
}
