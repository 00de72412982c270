/// `state_dir` and `storage.*`: where the daemon keeps its state and in what. The defaults live here; the
/// daemon's configuration reads the keys and hands them over.
public struct StorageConfiguration: Sendable, Hashable {
    /// `storage.backend`.
    public enum Backend: String, Sendable, CaseIterable {
        /// Durable: one SQLite database in the state directory.
        case sqlite
        /// Nothing survives a restart: benchmarks and trial runs.
        case memory
    }

    public static let defaultStateDirectory = "/var/lib/workoutd"

    public var backend: Backend
    public var stateDirectory: String

    public init(backend: Backend = .sqlite, stateDirectory: String = defaultStateDirectory) {
        self.backend = backend
        self.stateDirectory = stateDirectory
    }
}
