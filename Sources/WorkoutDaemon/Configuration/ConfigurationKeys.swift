import WorkoutProtocol

/// Every key the daemon understands, in one table.
///
/// The YAML checker, the `WORKOUTD_*` checker and the reload report all read it. Adding a key is one line here (plus
/// reading it in `DaemonConfiguration.load`).
///
/// `shares.*` stands for any share service (`ShareService`); a service not in that list is an error.
enum ConfigurationKeys {
    static let all: [ConfigurationKey] = [
        .init("devices", .list, .live),
        // `devices` may also be a section: `paths` (the list above) and `allowed_serials` (enrolment).
        .init("devices.paths", .list, .live),
        .init("devices.allowed_serials", .list, .live),
        .init("serial.baud", .integer, .live),
        .init("serial.max_line_bytes", .integer, .live),
        .init("serial.max_pending_lines", .integer, .live),
        .init("serial.reply_line_ending", .string, .live),
        .init("reconnect.initial_delay_ms", .integer, .live),
        .init("reconnect.max_delay_ms", .integer, .live),
        .init("discovery.enabled", .boolean, .live),
        .init("discovery.match", .list, .live),
        .init("state_dir", .string, .restart),
        .init("storage.backend", .string, .restart),
        .init("shares.*.sink", .string, .live),
        .init("shares.*.url", .string, .live),
        .init("shares.*.command", .list, .live),
        .init("shares.*.timeout_ms", .integer, .live),
        .init("control_socket", .string, .restart),
        .init("control_socket_group", .string, .restart),
        .init("log_level", .string, .live),
        .init("shutdown.drain_timeout_ms", .integer, .restart),
        .init("replication.postgres_url", .string, .restart),
        .init("replication.password_file", .string, .live),
        .init("replication.password_credential", .string, .live),
        .init("replication.allow_password_without_verified_server", .boolean, .restart),
        .init("replication.hub_id", .string, .restart),
        .init("replication.retention_days", .integer, .restart),
        .init("replication.max_connections", .integer, .restart),
        .init("limits.commands_per_second", .integer, .live),
        .init("limits.command_burst", .integer, .live),
        .init("limits.pending_shares_per_device", .integer, .live),
        .init("limits.session_idle_timeout_s", .integer, .live),
        .init("storage.max_database_bytes", .integer, .live),
        .init("web.listen", .string, .live),
        .init("web.tls_certificate", .string, .live),
        .init("web.tls_key", .string, .live),
        .init("web.token_credential", .string, .live),
        .init("web.token_file", .string, .live),
        .init("web.server_names", .list, .live),
        .init("web.session_lifetime_s", .integer, .live),
        .init("clock.assume_synchronized", .boolean, .restart),
    ]

    /// The wildcard `*` in a key stands for one of these names.
    static let wildcardNames = ShareService.allCases.map(\.rawValue)

    /// Every concrete dotted key (wildcards expanded).
    static let expanded: [(name: String, key: ConfigurationKey)] = all.flatMap { key in
        key.name.contains("*")
            ? wildcardNames.map { (key.name.replacingOccurrences(of: "*", with: $0), key) }
            : [(key.name, key)]
    }

    /// The key for a dotted path, if it is one.
    static func key(named name: String) -> ConfigurationKey? {
        expanded.first { $0.name == name }?.key
    }

    /// Whether `path` is a section (a mapping that holds keys), e.g. `serial` or `shares.twitter`.
    static func isSection(_ path: String) -> Bool {
        expanded.contains { $0.name.hasPrefix(path + ".") }
    }

    /// The names directly under `section` ("" for the top level), for suggestions.
    static func children(of section: String) -> [String] {
        let prefix = section.isEmpty ? "" : section + "."
        var names: [String] = []
        for (name, _) in expanded where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let child = String(rest.prefix { $0 != "." })
            if !names.contains(child) { names.append(child) }
        }
        return names
    }

    /// Keys in other sections whose last part is, or nearly is, `name`: where a mis-indented key belongs.
    ///
    /// The closest ones only, at most three.
    static func elsewhere(_ name: String, outside section: String) -> [String] {
        let prefix = section.isEmpty ? "" : section + "."
        let others = expanded.map(\.name).filter { !$0.hasPrefix(prefix) || prefix.isEmpty }
        let scored = others.compactMap { full -> (String, Int)? in
            guard full.contains("."), let last = full.split(separator: ".").last else { return nil }
            let distance = editDistance(name.lowercased(), last.lowercased())
            return distance <= max(2, name.count / 3) ? (full, distance) : nil
        }
        guard let best = scored.map(\.1).min() else { return [] }
        return Array(scored.filter { $0.1 == best }.map(\.0).prefix(3))
    }

    /// The environment variable that sets `name`.
    ///
    /// `serial.max_line_bytes` → `WORKOUTD_SERIAL_MAX_LINE_BYTES`.
    static func environmentVariable(for name: String) -> String {
        DaemonConfiguration.environmentPrefix + name.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// The known name closest to `word` (edit distance), when it is close enough to be a likely typo.
    static func nearest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = row
        }
        return previous[b.count]
    }
}

/// One configuration key: its dotted name, the shape of its value, and whether SIGHUP applies it.
struct ConfigurationKey: Sendable {
    enum Kind: Sendable {
        case string, integer, boolean, list

        var expectation: String {
            switch self {
            case .string: "a string"
            case .integer: "an integer"
            case .boolean: "true or false"
            case .list: "a list (e.g. [a, b])"
            }
        }
    }

    enum Reload: Sendable {
        /// Applied on SIGHUP.
        case live
        /// Read only at start; a change is reported as "takes effect after restart".
        case restart
    }

    var name: String
    var kind: Kind
    var reload: Reload

    init(_ name: String, _ kind: Kind, _ reload: Reload) {
        self.name = name
        self.kind = kind
        self.reload = reload
    }
}
