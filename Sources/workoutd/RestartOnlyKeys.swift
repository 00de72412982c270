extension DaemonConfiguration {
    /// The value of each key read only at start (`ConfigurationKeys`, `.restart`), as text, so a reload can
    /// tell which of them changed. A restart-only key read by `load` belongs here too.
    var restartOnlyValues: [String: String] {
        [
            "state_dir": stateDirectory,
            "storage.backend": storage.rawValue,
            "control_socket": controlSocket ?? "",
            "shutdown.drain_timeout_ms": "\(drainTimeout)",
            // The URL's parts rather than its text: the password it may carry stays out of comparisons' logs.
            "replication.postgres_url": replication.map { "\($0.endpoint) \($0.username) \($0.database ?? "") \($0.sslMode) \($0.urlPassword != nil)" } ?? "",
            "replication.password_file": replication?.passwordFile ?? "",
            "replication.hub_id": replication?.hubID ?? "",
            "replication.retention_days": replication?.retention.map { "\($0)" } ?? "",
        ]
    }

    /// The restart-only keys whose value in `newer` differs from this (the running) configuration, sorted.
    func restartOnlyChanges(in newer: DaemonConfiguration) -> [String] {
        let running = restartOnlyValues
        return newer.restartOnlyValues.filter { running[$0.key] != $0.value }.keys.sorted()
    }
}
