import Foundation

/// Takes secrets out of what `workoutctl diagnose` collects, marking each removed value `**REDACTED**`.
///
/// Two passes. The configuration is read key by key: a password, token or secret, a URL's credentials, query and
/// path (webhooks carry their key there) and a share command's arguments are replaced, and each value taken out is
/// remembered. Then every collected text loses those values wherever they appear (a unit's `Environment=`, a log
/// line), and whatever still looks like a credential: `user:password@` in a URL, `password=`, `token=` and the like,
/// `Authorization:` headers.
public struct Redaction: Sendable {
    public static let marker = "**REDACTED**"

    /// Values taken out so far; removed from every text ``scrub(_:)`` is given.
    public private(set) var secrets: Set<String> = []

    public init() {}

    /// Remembers `value` (a secret read elsewhere, e.g. a token file) so that ``scrub(_:)`` removes it.
    public mutating func remember(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        // Very short values, numbers and YAML's words would blank out ordinary text; such a secret is no secret.
        guard trimmed.count >= 4, !trimmed.allSatisfy(\.isNumber),
            !["true", "false", "null"].contains(trimmed.lowercased())
        else { return }
        secrets.insert(trimmed)
    }

    /// Remembers a command's argument unless it is an option's name (`--token`), which is no secret.
    mutating func rememberArgument(_ argument: String) {
        if !argument.hasPrefix("-") { remember(argument) }
    }

    /// `text` without the remembered secrets and without anything shaped like a credential.
    public func scrub(_ text: String) -> String {
        var text = text
        for secret in secrets.sorted(by: { $0.count > $1.count }) {
            text = text.replacingOccurrences(of: secret, with: Self.marker)
        }
        for (pattern, template) in Self.patterns {
            text = pattern.stringByReplacingMatches(
                in: text,
                range: NSRange(text.startIndex..., in: text),
                withTemplate: template
            )
        }
        return text
    }

    private static let patterns: [(NSRegularExpression, String)] = [
        // scheme://user:password@host
        (#"([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):[^\s@/]+@"#, "$1:**REDACTED**@"),
        // password=…, token=…, in a query string, a DSN or a log line
        (
            #"(?i)\b((?:[a-z_]*password|passwd|pwd|[a-z_]*token|[a-z_]*secret|api_?key|sig|signature|auth)\s*[=:]\s*)(?!"?\*\*REDACTED)("[^"]*"|'[^']*'|[^\s&;,"']+)"#,
            "$1**REDACTED**"
        ),
        (#"(?i)(authorization:\s*(?:bearer|basic|token)\s+)[^\s"']+"#, "$1**REDACTED**"),
    ].compactMap { pattern, template in
        (try? NSRegularExpression(pattern: pattern)).map { ($0, template) }
    }

    /// The configuration file, its secrets replaced; every replaced value is remembered for ``scrub(_:)``.
    ///
    /// Line by line, following the keys' indentation: `replication.postgres_url` keeps its scheme, host and database,
    /// `shares.*.url` its scheme and host, `shares.*.command` its program; a key named like a password, token or secret
    /// loses its value. Comments are dropped: they may hold an old secret.
    public mutating func configuration(_ yaml: String) -> String {
        var path: [(indent: Int, key: String)] = []
        var output: [String] = []
        var listOwner: (indent: Int, key: String, items: Int)?
        for rawLine in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            // A comment line goes whole, so the file does not turn into blank lines.
            if rawLine.drop(while: { $0 == " " }).hasPrefix("#") { continue }
            let line = Self.withoutComment(String(rawLine))
            let indent = line.prefix { $0 == " " }.count
            let body = line.dropFirst(indent)
            if body.isEmpty {
                output.append(line)
                continue
            }
            if body.hasPrefix("- "), let owner = listOwner, indent >= owner.indent {
                // An item of a block list: a share command keeps its program only.
                let item = String(body.dropFirst(2))
                if owner.key.hasSuffix(".command"), owner.items > 0 {
                    rememberArgument(Self.unquoted(item))
                    output.append(String(repeating: " ", count: indent) + "- \"\(Self.marker)\"")
                } else {
                    output.append(line)
                }
                listOwner?.items += 1
                continue
            }
            listOwner = nil
            guard let colon = Self.keyColon(in: body) else {
                output.append(line)
                continue
            }
            let key = String(body[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(body[body.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            while let last = path.last, last.indent >= indent { path.removeLast() }
            let full = (path.map(\.key) + [key]).joined(separator: ".")
            path.append((indent, key))
            if value.isEmpty {
                listOwner = (indent, full, 0)
                output.append(line)
                continue
            }
            output.append(String(repeating: " ", count: indent) + key + ": " + redacted(value, key: full))
        }
        return output.joined(separator: "\n")
    }

    /// `value` of the key `key` (its dotted path) as the redacted configuration shows it.
    mutating func redacted(_ value: String, key: String) -> String {
        let name = key.split(separator: ".").last.map(String.init) ?? key
        let lowered = name.lowercased()
        let plain = Self.unquoted(value)
        if plain.isEmpty { return value }
        if key.hasPrefix("shares."), lowered == "command" {
            let items = Self.inlineList(plain)
            guard items.count > 1 else { return value }
            for item in items.dropFirst() { rememberArgument(item) }
            return "[\(items[0]), \"\(Self.marker)\"]"
        }
        if lowered.hasSuffix("url") || lowered.hasSuffix("dsn") || plain.contains("://") {
            return "\"\(redactedURL(plain, keepPath: key == "replication.postgres_url"))\""
        }
        let pathLike = lowered.hasSuffix("_file") || lowered.hasSuffix("_credential")
        if !pathLike, Self.secretNames.contains(where: { lowered.hasSuffix($0) }) {
            remember(plain)
            return "\"\(Self.marker)\""
        }
        return value
    }

    /// How the names of keys whose values are secrets themselves end.
    ///
    /// A `_file` or `_credential` key only names where one is.
    static let secretNames = ["password", "passwd", "token", "secret", "api_key", "apikey", "private_key"]

    /// `url` with its password, and unless `keepPath` its path and query, replaced.
    ///
    /// Each removed part is remembered.
    mutating func redactedURL(_ url: String, keepPath: Bool) -> String {
        guard let schemeEnd = url.range(of: "://") else {
            remember(url)
            return Self.marker
        }
        let scheme = url[..<schemeEnd.upperBound]
        var rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        rest = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            let host = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                remember(String(userInfo[userInfo.index(after: colon)...]))
                authority = "\(userInfo[..<colon]):\(Self.marker)@\(host)"
            }
        }
        if rest.isEmpty { return scheme + authority }
        if keepPath {
            // A database URL: its path is the database's name; credentials in the query are scrubbed by pattern.
            return scrub(scheme + authority + rest)
        }
        remember(String(rest))
        return scheme + authority + "/" + Self.marker
    }

    /// The position of the colon that ends a mapping key, if the line is `key: value` or `key:`.
    static func keyColon(in body: Substring) -> Substring.Index? {
        guard let colon = body.firstIndex(of: ":") else { return nil }
        let after = body.index(after: colon)
        guard after == body.endIndex || body[after] == " " else { return nil }
        let key = body[..<colon]
        guard !key.isEmpty, !key.contains(" "), !key.hasPrefix("\""), !key.hasPrefix("'") else { return nil }
        return colon
    }

    /// `line` without a trailing `# comment` (a `#` outside quotes, at the start or after a space).
    static func withoutComment(_ line: String) -> String {
        var quote: Character?
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#", previous == " " {
                var kept = String(line[..<index])
                while kept.last == " " { kept.removeLast() }
                return kept
            }
            previous = character
        }
        return line
    }

    static func unquoted(_ value: String) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed.count >= 2, let first = trimmed.first, first == "\"" || first == "'", trimmed.last == first {
            return String(trimmed.dropFirst().dropLast())
        }
        return trimmed
    }

    /// The items of an inline YAML list `[a, "b c"]`; a plain value is a list of one.
    static func inlineList(_ value: String) -> [String] {
        guard value.hasPrefix("["), value.hasSuffix("]") else { return [value] }
        var items: [String] = []
        var current = ""
        var quote: Character?
        for character in value.dropFirst().dropLast() {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "," {
                items.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        let last = current.trimmingCharacters(in: .whitespaces)
        if !last.isEmpty { items.append(last) }
        return items
    }
}
