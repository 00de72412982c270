import Foundation
import Replication
import WebServer

extension DaemonConfiguration {
    /// `web.*`. The token is read here, at start and on every reload, so a new credential needs no restart.
    ///
    /// The fleet page's `fleet.*` are the same keys, read into `base` (its own defaults) under `section`.
    static func readWeb(
        _ reader: ConfigurationReader,
        section: String = "web",
        base: WebConfiguration = WebConfiguration()
    ) throws -> WebConfiguration {
        var web = base
        if let listen = try reader.string("\(section).listen") {
            if listen == "off" || listen.isEmpty {
                web.listen = nil
            } else {
                do {
                    web.listen = try ListenAddress(parsing: listen)
                } catch {
                    throw ConfigurationError(key: "\(section).listen", problem: "\(error.description); got '\(listen)'")
                }
            }
        }
        let certificate = try reader.path("\(section).tls_certificate").flatMap { $0.isEmpty ? nil : $0 }
        let key = try reader.path("\(section).tls_key").flatMap { $0.isEmpty ? nil : $0 }
        switch (certificate, key) {
        case (let certificate?, let key?):
            web.tls = try readTLSFiles(certificate: certificate, key: key, section: section)
        case (nil, nil):
            break
        case (nil, _?):
            throw ConfigurationError(key: "\(section).tls_certificate", problem: "must be set with \(section).tls_key")
        case (_?, nil):
            throw ConfigurationError(key: "\(section).tls_key", problem: "must be set with \(section).tls_certificate")
        }
        web.token = try readWebToken(reader, section: section)
        web.serverNames = try reader.strings("\(section).server_names") ?? []
        for name in web.serverNames where name.isEmpty || name.utf8.count > 253 || name.contains(where: \.isWhitespace)
        {
            throw ConfigurationError(key: "\(section).server_names", problem: "'\(name)' is not a host name")
        }
        let lifetime = try reader.integer(
            "\(section).session_lifetime_s",
            default: Int(web.sessionLifetime / .seconds(1))
        ) { (1...31 * 86_400).contains($0) ? nil : "must be 1 to 2678400 (31 days)" }
        web.sessionLifetime = .seconds(lifetime)
        if web.requiresLogin, web.token == nil, let listen = web.listen {
            throw ConfigurationError(
                key: "\(section).listen",
                problem:
                    "\(listen) is reachable from the network, so logins need a token: set \(section).token_credential (LoadCredential=) or \(section).token_file"
            )
        }
        return web
    }

    /// The certificate chain and private key, read now, and checked.
    ///
    /// A reload that finds them changed restarts the listener with them. The key's file must be private (0600 or 0400),
    /// as the token's is.
    private static func readTLSFiles(
        certificate: String,
        key: String,
        section: String
    ) throws -> WebConfiguration.TLSFiles {
        let certificateText: String
        let keyText: String
        do {
            certificateText = try PrivateFile.read(certificate, requirePrivate: false)
        } catch {
            throw ConfigurationError(key: "\(section).tls_certificate", problem: error.description)
        }
        do {
            keyText = try PrivateFile.read(key, requirePrivate: true)
        } catch {
            throw ConfigurationError(key: "\(section).tls_key", problem: error.description)
        }
        let files = WebConfiguration.TLSFiles(
            certificate: certificate,
            key: key,
            certificatePEM: Array(certificateText.utf8),
            keyPEM: Array(keyText.utf8)
        )
        if let problem = files.problem() {
            // The check names the hub page's keys; the fleet page's are the same under its own section.
            let key = section + problem.key.drop(while: { $0 != "." })
            throw ConfigurationError(key: key, problem: problem.message)
        }
        return files
    }

    /// The login token.
    ///
    /// The first line of the credential `<section>.token_credential` names, or of `<section>.token_file` (0600).
    private static func readWebToken(_ reader: ConfigurationReader, section: String) throws -> WebToken? {
        let credential = try reader.string("\(section).token_credential").flatMap { $0.isEmpty ? nil : $0 }
        let file = try reader.path("\(section).token_file").flatMap { $0.isEmpty ? nil : $0 }
        let key: String
        let path: String
        switch (credential, file) {
        case (nil, nil):
            return nil
        case (_?, _?):
            throw ConfigurationError(
                key: "\(section).token_credential",
                problem: "and \(section).token_file are both set; keep one"
            )
        case (let name?, nil):
            guard !name.contains("/"), name != ".", name != ".." else {
                throw ConfigurationError(
                    key: "\(section).token_credential",
                    problem: "must be a credential name (LoadCredential=<name>:<file>), not a path; got '\(name)'"
                )
            }
            guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty
            else {
                throw ConfigurationError(
                    key: "\(section).token_credential",
                    problem:
                        "names credential '\(name)', but $CREDENTIALS_DIRECTORY is not set: the unit needs LoadCredential=\(name):/etc/workoutd/\(name)"
                )
            }
            key = "\(section).token_credential"
            path = directory + "/" + name
        case (nil, let file?):
            key = "\(section).token_file"
            path = file
        }
        let text: String
        do {
            text = try PrivateFile.read(
                path,
                requirePrivate: key == "\(section).token_file",
                credentialKey: "\(section).token_credential"
            )
        } catch {
            throw ConfigurationError(key: key, problem: error.description)
        }
        let token = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespaces)
        // A weak token can be guessed even through the login throttle.
        if let problem = TokenStrength.problem(with: token) {
            throw ConfigurationError(key: key, problem: "\(problem) (in \(path))")
        }
        return WebToken(token)
    }
}

extension ReloadHook {
    /// `web.*`.
    ///
    /// The server starts, stops or moves to the new address; the token and TLS files are read again, and a certificate
    /// or key whose contents changed restarts the listener with them.
    static func web(_ server: WebServer) -> ReloadHook {
        ReloadHook(name: "web") { configuration in
            { server.update(configuration.web) }
        }
    }
}
