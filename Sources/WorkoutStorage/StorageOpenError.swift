/// Why the database in the state directory could not be opened; the daemon prints it and exits.
///
/// Every case names the file, and none of them is raised after anything was written to it.
public struct StorageOpenError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the file, in broad terms, for callers that branch on it.
    public enum Kind: Sendable, Hashable {
        /// The file exists but is not an SQLite database (wrong header, or SQLite rejects it).
        case notADatabase
        /// An SQLite database that belongs to another program.
        case foreignDatabase
        /// A workoutd database from a newer version, with migrations this binary does not know.
        case newerSchema
        /// An SQLite database that fails its integrity check.
        case corrupt
        /// Read-only inspection of a database that does not exist.
        case missing
        /// The file or its directory could not be opened (permissions, I/O error).
        case cannotOpen
    }

    public var kind: Kind
    public var path: String
    /// A sentence saying what is wrong and what to do.
    public var detail: String

    public init(kind: Kind, path: String, detail: String) {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    public var description: String { "cannot use the database at \(path): \(detail)" }
}
