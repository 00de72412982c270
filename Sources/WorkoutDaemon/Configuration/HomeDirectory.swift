import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `~` in a path key, expanded the one way every path key and path flag shares.
///
/// A shell expands `~` on a command line but not in a YAML file or an environment variable; taken literally, it
/// made a directory named `~` in the working directory. `~` and `~/…` become the home of the daemon's user
/// (`HOME`, else the password database); `~name/…` is refused with the key's name rather than guessed at.
enum HomeDirectory {
    /// `text` with a leading `~` or `~/` expanded; nil stays nil, and other paths are returned unchanged.
    static func expandIfSet(_ text: String?, key: String) throws -> String? {
        guard let text else { return nil }
        return try expand(text, key: key)
    }

    static func expand(_ text: String, key: String) throws -> String {
        guard text.hasPrefix("~") else { return text }
        guard text == "~" || text.hasPrefix("~/") else {
            throw ConfigurationError(
                key: key,
                problem: "only ~ and ~/ are expanded (to this user's home); write the full path instead of '\(text)'"
            )
        }
        guard let home = current(), home.hasPrefix("/") else {
            throw ConfigurationError(
                key: key,
                problem: "'\(text)' starts with ~, but this user has no home directory; write the full path"
            )
        }
        let rest = text.dropFirst(2)
        guard !rest.isEmpty else { return home }
        return (home.hasSuffix("/") ? home : home + "/") + rest
    }

    /// `HOME`, else the home directory the password database gives the effective user.
    static func current() -> String? {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
        let home = String(cString: directory)
        return home.isEmpty ? nil : home
    }
}
