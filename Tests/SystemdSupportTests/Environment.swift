import Glibc

/// Sets environment variables for the duration of `body`, then restores them.
/// The environment is process-wide: only call this from the serialized suite.
func withEnvironment<T>(_ values: [String: String?], _ body: () async throws -> T) async rethrows -> T {
    var previous: [String: String?] = [:]
    for (name, value) in values {
        previous[name] = getenv(name).map { String(cString: $0) }
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    defer {
        for (name, value) in previous {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    return try await body()
}
