import Foundation
import WorkoutProtocol

/// How each service's shares are delivered, as read from the configuration file:
///
/// ```yaml
/// shares:
///   twitter:
///     sink: webhook            # spool (default) | webhook | exec
///     url: http://127.0.0.1:8080/shares
///     timeout_ms: 5000
///   instagram:
///     sink: exec
///     command: [/usr/local/bin/post-share, --service, instagram]
///     timeout_ms: 10000
/// ```
/// A service with no entry spools to `<state-dir>/outbox/<service>/`.
public struct ShareSinkConfiguration: Sendable, Hashable {
    /// Which kind of sink, with what that kind needs.
    public enum Kind: Sendable, Hashable {
        case spool
        case webhook(url: String)
        case exec(command: [String])
    }

    /// One service's sink.
    public struct Sink: Sendable, Hashable {
        public var kind: Kind
        /// How long one attempt may take (webhook request, exec run); ignored by spool.
        public var timeout: Duration

        public static let defaultTimeout = Duration.seconds(10)

        public init(kind: Kind, timeout: Duration = Sink.defaultTimeout) {
            self.kind = kind
            self.timeout = timeout
        }

        /// Builds a sink from the configuration's scalars, or says which key is wrong.
        ///
        /// `keyPrefix` is the dotted prefix of the service's keys (`shares.twitter`), used in messages.
        public init(
            keyPrefix: String,
            sink: String?,
            url: String?,
            command: [String]?,
            timeoutMilliseconds: Int?
        ) throws(ShareSinkConfigurationError) {
            if let timeoutMilliseconds, timeoutMilliseconds <= 0 {
                throw ShareSinkConfigurationError(
                    key: "\(keyPrefix).timeout_ms",
                    message: "must be a positive number of milliseconds; got \(timeoutMilliseconds)."
                )
            }
            let timeout = timeoutMilliseconds.map { Duration.milliseconds($0) } ?? Sink.defaultTimeout
            switch sink ?? "spool" {
            case "spool":
                self.init(kind: .spool, timeout: timeout)
            case "webhook":
                guard let url, let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""),
                    parsed.host != nil
                else {
                    throw ShareSinkConfigurationError(
                        key: "\(keyPrefix).url",
                        message:
                            "a webhook sink needs an http:// or https:// URL; got \(url.map { "'\(WebhookShareSink.redacted($0))'" } ?? "nothing")."
                    )
                }
                self.init(kind: .webhook(url: url), timeout: timeout)
            case "exec":
                guard let command, let program = command.first, !program.isEmpty else {
                    throw ShareSinkConfigurationError(
                        key: "\(keyPrefix).command",
                        message: "an exec sink needs a command: a list whose first item is the program."
                    )
                }
                self.init(kind: .exec(command: command), timeout: timeout)
            case let other:
                throw ShareSinkConfigurationError(
                    key: "\(keyPrefix).sink",
                    message: "must be spool, webhook or exec; got '\(other)'."
                )
            }
        }
    }

    public var sinks: [ShareService: Sink]

    public init(sinks: [ShareService: Sink] = [:]) {
        self.sinks = sinks
    }

    public func sink(for service: ShareService) -> Sink {
        sinks[service] ?? Sink(kind: .spool)
    }

    /// One ready ``ShareSink`` per service; services with no entry spool under `stateDirectory`.
    public func makeSinks(stateDirectory: String) -> [ShareService: any ShareSink] {
        var result: [ShareService: any ShareSink] = [:]
        for service in ShareService.allCases {
            let sink = sink(for: service)
            switch sink.kind {
            case .spool: result[service] = SpoolShareSink(stateDirectory: stateDirectory)
            case .webhook(let url): result[service] = WebhookShareSink(url: url, timeout: sink.timeout)
            case .exec(let command): result[service] = ExecShareSink(command: command, timeout: sink.timeout)
            }
        }
        return result
    }
}

/// A sink setting that cannot work; `key` is the dotted configuration key to fix.
public struct ShareSinkConfigurationError: Error, Sendable, CustomStringConvertible {
    public var key: String
    public var message: String
    public var description: String { "\(key) \(message)" }
}
