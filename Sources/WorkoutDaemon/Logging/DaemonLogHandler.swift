import Foundation
import Logging
import Synchronization
import WorkoutProtocol

/// The level of every logger of one daemon that did not set its own.
///
/// `log_level` changes it on reload, for loggers made before the reload too (each `Logger` keeps a copy of its
/// handler).
final class DaemonLogLevel: Sendable {
    /// The level of the daemon that owns the process.
    static let process = DaemonLogLevel()

    private let index = Atomic<UInt8>(DaemonLogHandler.Level.index(.info))

    var level: Logger.Level {
        get { DaemonLogHandler.Level.from(index.load(ordering: .relaxed)) }
        set { index.store(DaemonLogHandler.Level.index(newValue), ordering: .relaxed) }
    }
}

/// One line per event on stderr, with metadata as `key=value`.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with its syslog priority (`<6>`) and carries no
/// timestamp, since journald adds both; `journalctl -p warning` then filters properly. A daemon assembled in a test
/// process hands its lines to `output` instead of stderr.
struct DaemonLogHandler: LogHandler {
    /// A level set on one logger (`logger.logLevel = …`) wins over the configured one.
    private var ownLevel: Logger.Level?
    var logLevel: Logger.Level {
        get { ownLevel ?? configuredLevel.level }
        set { ownLevel = newValue }
    }
    var metadata: Logger.Metadata = [:]
    private let label: String
    private let forJournal: Bool
    private let configuredLevel: DaemonLogLevel
    private let output: (@Sendable (String) -> Void)?

    /// stderr is shared by every logger; a lock keeps lines whole.
    private static let standardError = Mutex<Void>(())

    init(
        label: String,
        forJournal: Bool,
        level: DaemonLogLevel = .process,
        output: (@Sendable (String) -> Void)? = nil
    ) {
        self.label = label
        self.forJournal = forJournal
        self.configuredLevel = level
        self.output = output
    }

    /// `Logger.Level` as a number an `Atomic` can hold.
    enum Level {
        static func index(_ level: Logger.Level) -> UInt8 {
            UInt8(Logger.Level.allCases.firstIndex(of: level) ?? 0)
        }

        static func from(_ index: UInt8) -> Logger.Level {
            let all = Logger.Level.allCases
            return Int(index) < all.count ? all[Int(index)] : .info
        }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line =
            forJournal
            ? "<\(Self.syslogPriority(event.level))>"
            : "\(Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))) \(event.level) "
        // Messages and values carry device input (identities, ids, paths, errors): escaped, so none can end the
        // line early (in the journal, an entry without its priority), drive a terminal, or forge a field.
        line += UntrustedText.escaped(event.message.description)
        let merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(UntrustedText.escaped(key))=\(UntrustedText.logfmtValue(Self.text(of: value)))"
        }
        line += "\n"
        if let output {
            output(line)
            return
        }
        Self.standardError.withLock { _ in
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// A metadata value as plain text: a list's items joined by `, `, a dictionary's as `key: value`.
    ///
    /// Not Swift's debug form, whose brackets and quotes would come out escaped into noise; escaping is
    /// ``UntrustedText/logfmtValue(_:)``'s, afterwards.
    static func text(of value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let items): items.map(text(of:)).joined(separator: ", ")
        case .dictionary(let entries):
            entries.sorted { $0.key < $1.key }.map { "\($0.key): \(text(of: $0.value))" }.joined(separator: ", ")
        }
    }

    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
