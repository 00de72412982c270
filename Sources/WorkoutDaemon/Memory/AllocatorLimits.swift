import CMalloc

/// Limits glibc's malloc to two arenas with fixed mmap and trim thresholds.
///
/// glibc's malloc, left to its defaults, kept the daemon's RSS growing with write load over hours. The
/// arenas (one per thread that ever allocated under contention, up to 8 per core) held mostly free memory,
/// most of it the free top of each arena's heap. A freed block bigger than the mmap threshold raises that
/// threshold, and the trim threshold with it to twice as much (glibc's dynamic threshold), so each arena may
/// keep up to tens of MB of free top and never give it back; `malloc_trim` trims only the main arena's top.
/// Fixed thresholds turn the dynamic adjustment off, and two arenas are plenty for a daemon whose threads
/// mostly wait on I/O. The figures are in docs/decisions/0003-allocator-and-memory-release.md.
///
/// A setting the operator gave through glibc's own environment variables (`MALLOC_ARENA_MAX`, ...,
/// `GLIBC_TUNABLES`, e.g. in a systemd drop-in's `Environment=`) is left to glibc.
enum AllocatorLimits {
    struct Setting: Equatable, CustomStringConvertible {
        /// The `mallopt` parameter (M_ARENA_MAX, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD).
        var parameter: Int32
        var value: Int32
        /// glibc's environment variable for the same setting, and its tunable's name in `GLIBC_TUNABLES`.
        var environmentName: String
        var tunable: String

        var description: String { "\(environmentName.dropLast(environmentName.hasSuffix("_") ? 1 : 0))=\(value)" }
    }

    static let defaults: [Setting] = [
        Setting(
            parameter: M_ARENA_MAX,
            value: 2,
            environmentName: "MALLOC_ARENA_MAX",
            tunable: "glibc.malloc.arena_max"
        ),
        // Blocks from 256 KiB up are mapped on their own and unmapped when freed.
        Setting(
            parameter: M_MMAP_THRESHOLD,
            value: 256 * 1024,
            environmentName: "MALLOC_MMAP_THRESHOLD_",
            tunable: "glibc.malloc.mmap_threshold"
        ),
        // An arena gives back its free top once it exceeds 512 KiB.
        Setting(
            parameter: M_TRIM_THRESHOLD,
            value: 512 * 1024,
            environmentName: "MALLOC_TRIM_THRESHOLD_",
            tunable: "glibc.malloc.trim_threshold"
        ),
    ]

    /// The settings to apply: the defaults the environment does not set itself.
    static func plan(environment: [String: String]) -> [Setting] {
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        return defaults.filter { setting in
            environment[setting.environmentName] == nil && !tunables.contains(setting.tunable + "=")
        }
    }

    /// Applies ``plan(environment:)``.
    ///
    /// Called first thing in `serve`, before the threads that would each get an arena exist. Returns what was applied
    /// (for the start-up log).
    static func apply(environment: [String: String]) -> [Setting] {
        plan(environment: environment).filter { mallopt($0.parameter, $0.value) == 1 }
    }
}
