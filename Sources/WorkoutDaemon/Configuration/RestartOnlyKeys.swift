extension DaemonConfiguration {
    /// The value of each key read only at start, as text, so a reload can tell which of them changed.
    ///
    /// Those are the `.restart` keys of `ConfigurationKeys`. A restart-only key read by `load` belongs here too.
    var restartOnlyValues: [String: String] {
        [
            "state_dir": stateDirectory,
            "storage.backend": storage.backend.rawValue,
            "control_socket": controlSocket ?? "",
            "control_socket_group": controlSocketGroup ?? "",
            "shutdown.drain_timeout_ms": "\(serial.drainTimeout)",
            // Redacted: a password written in the URL stays out of the comparison and its log line.
            "replication.postgres_url": replication?.redactedDescription ?? "",
            "replication.hub_id": replication?.hubID ?? "",
            "replication.retention_days": replication?.retention.map { "\($0)" } ?? "",
            "replication.max_connections": replication.map { "\($0.maximumConnections)" } ?? "",
            "replication.heartbeat_interval_s": replication.map { "\($0.heartbeatInterval)" } ?? "",
            "replication.hub_name": replication?.hubName ?? "",
            "replication.allow_password_without_verified_server": replication.map {
                "\($0.allowPasswordWithoutVerifiedServer)"
            } ?? "",
            "clock.assume_synchronized": "\(clockAssumedSynchronized)",
        ]
    }

    /// The restart-only keys whose value in `newer` differs from this (the running) configuration, sorted.
    func restartOnlyChanges(in newer: DaemonConfiguration) -> [String] {
        let running = restartOnlyValues
        return newer.restartOnlyValues.filter { running[$0.key] != $0.value }.keys.sorted()
    }
}
