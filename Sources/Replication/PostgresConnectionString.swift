import Foundation

/// `replication.postgres_url` taken apart as libpq reads it, before anything is checked or opened.
///
/// Two forms: the URL `postgresql://user[:password]@host[:port][,host[:port]…][/database][?key=value&…]` and the
/// key/value form `host=h1,h2 port=5432,5433 dbname=gym user=workoutd` (values in single quotes may hold spaces,
/// with `\'` and `\\` inside). `host` and `port` are comma-separated lists in both: one port for every host, or one
/// per host, an empty entry meaning 5432. In the URL, `host`, `port`, `dbname`, `user` and `password` given as query
/// items win over the URL's own parts, as in libpq.
public struct PostgresConnectionString: Sendable, Equatable {
    public struct Host: Sendable, Equatable, CustomStringConvertible {
        /// A host name, an IP address (IPv6 without brackets), or a unix socket directory (starts with `/`).
        public var name: String
        public var port: Int

        public init(_ name: String, _ port: Int = PostgresConnectionString.defaultPort) {
            self.name = name
            self.port = port
        }

        public var isSocketDirectory: Bool { name.hasPrefix("/") }

        public var description: String {
            name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)"
        }
    }

    public static let defaultPort = 5432
    /// The keywords the key/value form takes; a URL's other query items are ignored, as they always were.
    public static let keywords: Set<String> = [
        "host", "port", "dbname", "user", "password", "sslmode", "sslrootcert", "target_session_attrs",
    ]

    public var hosts: [Host]
    public var user: String?
    public var password: String?
    public var database: String?
    /// Every other setting: `sslmode`, `sslrootcert`, `target_session_attrs`.
    ///
    /// In a URL, also whatever else its query holds.
    public var options: [String: String]

    public init(
        hosts: [Host],
        user: String? = nil,
        password: String? = nil,
        database: String? = nil,
        options: [String: String] = [:]
    ) {
        self.hosts = hosts
        self.user = user
        self.password = password
        self.database = database
        self.options = options
    }

    /// Either form; which one is told by the `postgresql://` or `postgres://` at the start.
    public init(parsing text: String) throws(ReplicationConfigurationError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var settings: [String: String] = [:]
        var hostList: String?
        var portList: String?
        if let rest = Self.droppingScheme(trimmed) {
            let url = try Self.parseURL(rest)
            settings = url.query
            hostList = url.hosts
            portList = url.ports
            if let user = url.user { settings["user"] = settings["user"] ?? user }
            if let password = url.password { settings["password"] = settings["password"] ?? password }
            if let database = url.database { settings["dbname"] = settings["dbname"] ?? database }
        } else if trimmed.contains("=") {
            settings = try Self.parseKeywords(trimmed)
            if let unknown = settings.keys.sorted().first(where: { !Self.keywords.contains($0) }) {
                throw ReplicationConfigurationError(
                    "has an unknown keyword '\(unknown)'; known: \(Self.keywords.sorted().joined(separator: ", "))"
                )
            }
        } else {
            throw ReplicationConfigurationError(
                "must be a postgresql:// URL or libpq key=value settings, e.g. postgresql://workoutd@db.example/gym?sslmode=verify-full or host=db1,db2 dbname=gym user=workoutd"
            )
        }
        // Query items and keywords name the hosts and ports over the URL's authority.
        if let host = settings.removeValue(forKey: "host") { hostList = host }
        if let port = settings.removeValue(forKey: "port") { portList = port }
        hosts = try Self.pairHosts(hostList ?? "", ports: portList)
        user = settings.removeValue(forKey: "user").flatMap { $0.isEmpty ? nil : $0 }
        password = settings.removeValue(forKey: "password")
        database = settings.removeValue(forKey: "dbname").flatMap { $0.isEmpty ? nil : $0 }
        options = settings
    }

    private static func droppingScheme(_ text: String) -> Substring? {
        for scheme in ["postgresql://", "postgres://"] where text.lowercased().hasPrefix(scheme) {
            return text.dropFirst(scheme.count)
        }
        return nil
    }

    // MARK: - URL

    private struct URLParts {
        var user: String?
        var password: String?
        var hosts: String
        var ports: String?
        var database: String?
        var query: [String: String] = [:]
    }

    private static func parseURL(_ text: Substring) throws(ReplicationConfigurationError) -> URLParts {
        let fragmentless = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let queryStart = fragmentless.firstIndex(of: "?")
        let beforeQuery = fragmentless[..<(queryStart ?? fragmentless.endIndex)]
        let pathStart = beforeQuery.firstIndex(of: "/")
        var authority = beforeQuery[..<(pathStart ?? beforeQuery.endIndex)]
        var parts = URLParts(hosts: "")
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                parts.user = try decoded(userInfo[..<colon], "the user")
                parts.password = try decoded(userInfo[userInfo.index(after: colon)...], "the password")
            } else {
                parts.user = try decoded(userInfo, "the user")
            }
        }
        if !authority.isEmpty {
            var names: [String] = []
            var ports: [String] = []
            for entry in authority.split(separator: ",", omittingEmptySubsequences: false) {
                let (name, port) = try splitHostPort(entry)
                names.append(try decoded(name, "a host"))
                ports.append(String(port))
            }
            // libpq's quoting of a list: an IPv6 address keeps its colons, so it travels without brackets.
            parts.hosts = names.joined(separator: ",")
            parts.ports = ports.allSatisfy(\.isEmpty) ? nil : ports.joined(separator: ",")
        }
        if let pathStart {
            let path = beforeQuery[beforeQuery.index(after: pathStart)...]
            parts.database = try path.isEmpty ? nil : decoded(path, "the database")
        }
        if let queryStart {
            for item in fragmentless[fragmentless.index(after: queryStart)...].split(separator: "&") {
                guard let equals = item.firstIndex(of: "=") else {
                    throw ReplicationConfigurationError("has a query item without a value: '\(item)'")
                }
                let key = try decoded(item[..<equals], "a query item")
                parts.query[key] = try decoded(item[item.index(after: equals)...], "the value of \(key)")
            }
        }
        return parts
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    ///
    /// An empty host is refused later, with the whole list in view.
    private static func splitHostPort(
        _ entry: Substring
    ) throws(ReplicationConfigurationError) -> (Substring, Substring) {
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else {
                throw ReplicationConfigurationError("has an IPv6 address without its closing ']': '\(entry)'")
            }
            let name = entry[entry.index(after: entry.startIndex)..<close]
            let after = entry[entry.index(after: close)...]
            if after.isEmpty { return (name, "") }
            guard after.hasPrefix(":") else {
                throw ReplicationConfigurationError("has something after the IPv6 address '\(entry)' that is no port")
            }
            return (name, after.dropFirst())
        }
        guard let colon = entry.firstIndex(of: ":") else { return (entry, "") }
        return (entry[..<colon], entry[entry.index(after: colon)...])
    }

    private static func decoded(_ text: Substring, _ what: String) throws(ReplicationConfigurationError) -> String {
        guard let value = String(text).removingPercentEncoding else {
            throw ReplicationConfigurationError("has a malformed percent escape in \(what): '\(text)'")
        }
        return value
    }

    // MARK: - Key/value

    /// libpq's conninfo: `key = value` pairs separated by white space.
    ///
    /// A value is bare (a backslash escapes the next character) or in single quotes (where `\'` and `\\` are a quote
    /// and a backslash).
    private static func parseKeywords(_ text: String) throws(ReplicationConfigurationError) -> [String: String] {
        var settings: [String: String] = [:]
        var characters = Substring(text)
        func skipSpace() { characters = characters.drop(while: \.isWhitespace) }
        skipSpace()
        while !characters.isEmpty {
            let key = String(characters.prefix { $0 != "=" && !$0.isWhitespace })
            characters = characters.dropFirst(key.count)
            skipSpace()
            guard !key.isEmpty, characters.first == "=" else {
                throw ReplicationConfigurationError(
                    key.isEmpty ? "has '=' without a keyword before it" : "has no '=' after keyword '\(key)'"
                )
            }
            characters = characters.dropFirst()
            skipSpace()
            var value = ""
            if characters.first == "'" {
                characters = characters.dropFirst()
                var closed = false
                while let character = characters.popFirst() {
                    if character == "\\", let escaped = characters.popFirst() {
                        value.append(escaped)
                    } else if character == "'" {
                        closed = true
                        break
                    } else {
                        value.append(character)
                    }
                }
                guard closed else {
                    throw ReplicationConfigurationError("has an unterminated quoted value for '\(key)'")
                }
            } else {
                while let character = characters.first, !character.isWhitespace {
                    characters = characters.dropFirst()
                    if character == "\\", let escaped = characters.popFirst() {
                        value.append(escaped)
                    } else {
                        value.append(character)
                    }
                }
            }
            settings[key] = value
            skipSpace()
        }
        return settings
    }

    // MARK: - Hosts and ports

    private static func pairHosts(
        _ hostList: String,
        ports portList: String?
    ) throws(ReplicationConfigurationError) -> [Host] {
        let names = hostList.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard names.contains(where: { !$0.isEmpty }) else {
            throw ReplicationConfigurationError(
                "names no host; e.g. postgresql://workoutd@db.example/gym or host=db1,db2 dbname=gym user=workoutd"
            )
        }
        if names.contains(where: \.isEmpty) {
            throw ReplicationConfigurationError("has an empty entry in its host list '\(hostList)'")
        }
        var ports = Array(repeating: defaultPort, count: names.count)
        if let portList, !portList.isEmpty {
            let entries = portList.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard entries.count == 1 || entries.count == names.count else {
                throw ReplicationConfigurationError(
                    "lists \(entries.count) ports for \(names.count) hosts; give one port for all, or one per host"
                )
            }
            let parsed = try entries.map { entry throws(ReplicationConfigurationError) -> Int in
                if entry.isEmpty { return defaultPort }
                guard let port = Int(entry), (1...65535).contains(port) else {
                    throw ReplicationConfigurationError("has an invalid port '\(entry)' (1 to 65535)")
                }
                return port
            }
            ports = parsed.count == 1 ? Array(repeating: parsed[0], count: names.count) : parsed
        }
        return zip(names, ports).map { Host($0, $1) }
    }
}
