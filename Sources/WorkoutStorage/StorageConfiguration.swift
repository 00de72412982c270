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
    /// 1 GiB: years of workouts for a gym's devices, and well inside a hub's SD card.
    public static let defaultMaximumDatabaseBytes: Int64 = 1 << 30

    public var backend: Backend
    public var stateDirectory: String
    /// `storage.max_database_bytes`: beyond it new workouts get `storage_full`; 0 = no budget.
    ///
    /// Ends, shares and retries go on.
    public var maximumDatabaseBytes: Int64

    public init(
        backend: Backend = .sqlite,
        stateDirectory: String = defaultStateDirectory,
        maximumDatabaseBytes: Int64 = defaultMaximumDatabaseBytes
    ) {
        self.backend = backend
        self.stateDirectory = stateDirectory
        self.maximumDatabaseBytes = maximumDatabaseBytes
    }
}
