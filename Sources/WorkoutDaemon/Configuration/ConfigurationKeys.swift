import WorkoutProtocol

/// Every key the daemon understands, in one table.
///
/// The YAML checker, the `WORKOUTD_*` checker, the reload report and the manual `workoutd.yaml(5)` all read it.
/// Adding a key is one entry here (plus reading it in `DaemonConfiguration.load`).
///
/// `shares.*` stands for any share service (`ShareService`); a service not in that list is an error.
enum ConfigurationKeys {
    static let all: [ConfigurationKey] = [
        .init(
            "devices",
            .list,
            .live,
            default: "[]",
            "Serial devices to serve besides the ones udev finds: ttys, ptys, socat links (--device adds more). May instead be a section holding paths and allowed_serials."
        ),
        // `devices` may also be a section: `paths` (the list above) and `allowed_serials` (enrolment).
        .init(
            "devices.paths",
            .list,
            .live,
            default: "[]",
            "The list of paths when devices is a section."
        ),
        .init(
            "devices.allowed_serials",
            .list,
            .live,
            default: "none (every matching device)",
            "Enrolment: only these identities (ID_SERIAL, as workoutctl devices shows them) are served among the devices udev finds; the others are refused and listed by workoutctl devices --unknown."
        ),
        .init(
            "serial.baud",
            .integer,
            .live,
            default: "115200",
            "The baud rate ttys are opened at, 9600 to 4000000."
        ),
        .init(
            "serial.max_line_bytes",
            .integer,
            .live,
            default: "4096",
            "A longer line gets one line_too_long reply and the rest of it is skipped."
        ),
        .init(
            "serial.max_pending_lines",
            .integer,
            .live,
            default: "256",
            "Lines read but not yet answered before reading pauses (back-pressure)."
        ),
        .init(
            "serial.reply_line_ending",
            .string,
            .live,
            default: "auto",
            "auto (CRLF after a line ended by CR or CRLF, LF after LF), lf or crlf."
        ),
        .init(
            "reconnect.initial_delay_ms",
            .integer,
            .live,
            default: "50",
            "The first retry after a configured device disappears; the delay doubles from there."
        ),
        .init(
            "reconnect.max_delay_ms",
            .integer,
            .live,
            default: "2000",
            "The longest delay between retries."
        ),
        .init(
            "discovery.enabled",
            .boolean,
            .live,
            default: "true",
            "Find wearables through udev, at start and on hotplug; turning it off releases the devices it found."
        ),
        .init(
            "discovery.match",
            .list,
            .live,
            default: "[\"WORKOUTD_DEVICE=1\"]",
            "Rules of space-separated PROPERTY=glob conditions on udev properties; a tty matching any rule is served, any other is never opened."
        ),
        .init(
            "state_dir",
            .string,
            .restart,
            default: "/var/lib/workoutd",
            "Where the database (workoutd.sqlite), its lock and the spooled shares live; owned by the daemon's user, not writable by group or others."
        ),
        .init(
            "storage.backend",
            .string,
            .restart,
            default: "sqlite",
            "sqlite (durable) or memory (nothing survives a restart)."
        ),
        .init(
            "shares.*.sink",
            .string,
            .live,
            default: "spool",
            "How the service's shares are delivered: spool (one JSON file per share under state_dir/outbox/service), webhook (url) or exec (command)."
        ),
        .init(
            "shares.*.url",
            .string,
            .live,
            default: "none",
            "The webhook's URL: the share's JSON is POSTed there, a 2xx is a delivery; redirects are not followed."
        ),
        .init(
            "shares.*.command",
            .list,
            .live,
            default: "none",
            "The exec sink's command and arguments: the share's JSON on stdin, exit 0 is a delivery."
        ),
        .init(
            "shares.*.timeout_ms",
            .integer,
            .live,
            default: "10000",
            "How long one webhook request or exec run may take."
        ),
        .init(
            "control_socket",
            .string,
            .restart,
            default: "/run/workoutd/control.sock",
            "The Unix socket workoutctl talks to; \"\" or none disables it."
        ),
        .init(
            "control_socket_group",
            .string,
            .restart,
            default: "workoutd",
            "Members of this group may read through the control socket; \"\" means nobody but root and the daemon's user."
        ),
        .init(
            "log_level",
            .string,
            .live,
            default: "info",
            "trace, debug, info, notice, warning, error or critical."
        ),
        .init(
            "shutdown.drain_timeout_ms",
            .integer,
            .restart,
            default: "5000",
            "On SIGTERM, how long devices get to take their last replies."
        ),
        .init(
            "replication.postgres_url",
            .string,
            .restart,
            default: "\"\" (off)",
            "The central PostgreSQL to ship workouts and shares to: a postgresql:// URL or libpq key=value settings, with one host or several (postgresql://user@h1:5432,h2:5432/db, host=h1,h2 port=5432,5432). With several, the first that accepts writes is used (target_session_attrs read-write, the default then, or any). sslmode verify-full unless it says otherwise (prefer and allow are refused)."
        ),
        .init(
            "replication.password_file",
            .string,
            .live,
            default: "\"\"",
            "A file whose first line is the password; mode 0600 or 0400. Read again on reload."
        ),
        .init(
            "replication.password_credential",
            .string,
            .live,
            default: "\"\"",
            "The name of a systemd credential holding the password (LoadCredential=). Read again on reload."
        ),
        .init(
            "replication.allow_password_without_verified_server",
            .boolean,
            .restart,
            default: "false",
            "Send a cleartext or MD5 password over a link whose server identity was not verified."
        ),
        .init(
            "replication.hub_id",
            .string,
            .restart,
            default: "/etc/machine-id",
            "This hub's name in the central tables."
        ),
        .init(
            "replication.hub_name",
            .string,
            .restart,
            default: "the host name",
            "The name the fleet page shows for this hub (hubs.name); the hub id stays its key."
        ),
        .init(
            "replication.retention_days",
            .integer,
            .restart,
            default: "0 (keep)",
            "Prune shipped workouts and shares older than this from SQLite."
        ),
        .init(
            "replication.max_connections",
            .integer,
            .restart,
            default: "1",
            "Connections to the server, 1 to 8, kept open; a second overlaps batches to a distant server."
        ),
        .init(
            "replication.heartbeat_interval_s",
            .integer,
            .restart,
            default: "30",
            "Seconds between writes of this hub's row of hubs (status for the fleet page), 1 to 3600; offline after 3 missed."
        ),
        .init(
            "limits.commands_per_second",
            .integer,
            .live,
            default: "100",
            "Per device, a token bucket; over it a command gets rate_limited. 0 turns it off."
        ),
        .init(
            "limits.command_burst",
            .integer,
            .live,
            default: "1000",
            "Commands a device may send at once after a pause (the bucket's size)."
        ),
        .init(
            "limits.pending_shares_per_device",
            .integer,
            .live,
            default: "1000",
            "Undelivered shares per device; the next gets too_many_pending_shares. 0 means no limit."
        ),
        .init(
            "limits.session_idle_timeout_s",
            .integer,
            .live,
            default: "3600",
            "A gone device's session leaves memory after this long unused; 0 keeps it."
        ),
        .init(
            "storage.max_database_bytes",
            .integer,
            .live,
            default: "1073741824 (1 GiB)",
            "Beyond it start_workout gets storage_full; ends, shares and retries go on. 0 means no budget."
        ),
        .init(
            "web.listen",
            .string,
            .live,
            default: "127.0.0.1:8470",
            "The web page and HTTP API: host:port, [v6]:port, or off. An address other than loopback needs a token."
        ),
        .init(
            "web.tls_certificate",
            .string,
            .live,
            default: "\"\"",
            "A PEM certificate chain: HTTPS, with tls_key."
        ),
        .init(
            "web.tls_key",
            .string,
            .live,
            default: "\"\"",
            "The PEM key for tls_certificate; mode 0600 or 0400."
        ),
        .init(
            "web.token_credential",
            .string,
            .live,
            default: "\"\"",
            "The name of a systemd credential holding the login token (at least 128 bits of randomness)."
        ),
        .init(
            "web.token_file",
            .string,
            .live,
            default: "\"\"",
            "Or a file holding the token; mode 0600 or 0400."
        ),
        .init(
            "web.server_names",
            .list,
            .live,
            default: "[]",
            "Host names the page answers to besides its address; any other Host is answered 421."
        ),
        .init(
            "web.session_lifetime_s",
            .integer,
            .live,
            default: "43200",
            "How long a login lasts."
        ),
        .init(
            "fleet.listen",
            .string,
            .restart,
            default: "127.0.0.1:8471",
            "workoutd fleet's page and API (--listen overrides): host:port or [v6]:port. An address other than loopback needs a token. The serving daemon ignores fleet.*."
        ),
        .init(
            "fleet.tls_certificate",
            .string,
            .restart,
            default: "\"\"",
            "As web.tls_certificate, for the fleet page."
        ),
        .init(
            "fleet.tls_key",
            .string,
            .restart,
            default: "\"\"",
            "As web.tls_key, for the fleet page."
        ),
        .init(
            "fleet.token_credential",
            .string,
            .restart,
            default: "\"\"",
            "As web.token_credential, for the fleet page."
        ),
        .init(
            "fleet.token_file",
            .string,
            .restart,
            default: "\"\"",
            "As web.token_file, for the fleet page."
        ),
        .init(
            "fleet.server_names",
            .list,
            .restart,
            default: "[]",
            "As web.server_names, for the fleet page."
        ),
        .init(
            "fleet.session_lifetime_s",
            .integer,
            .restart,
            default: "43200",
            "As web.session_lifetime_s, for the fleet page."
        ),
        .init(
            "fleet.password_file",
            .string,
            .restart,
            default: "\"\"",
            "The fleet page's database password (its SELECT-only role), in a file of mode 0600 or 0400; or in --postgres-url."
        ),
        .init(
            "fleet.password_credential",
            .string,
            .restart,
            default: "\"\"",
            "Or the name of a systemd credential holding that password."
        ),
        .init(
            "clock.assume_synchronized",
            .boolean,
            .restart,
            default: "false",
            "Trust the wall clock without asking (a battery-backed clock, or chrony under ProtectClock=yes)."
        ),
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
///
/// Its default and meaning are what the manual `workoutd.yaml(5)` shows.
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
    /// The value in force when neither the file nor the environment sets the key, as the manual shows it.
    var defaultValue: String
    /// One or two sentences for the manual, `workoutd.yaml(5)`.
    var summary: String

    init(_ name: String, _ kind: Kind, _ reload: Reload, default defaultValue: String, _ summary: String) {
        self.name = name
        self.kind = kind
        self.reload = reload
        self.defaultValue = defaultValue
        self.summary = summary
    }
}
