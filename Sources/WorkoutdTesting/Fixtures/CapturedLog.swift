import Logging
import Synchronization

/// A logger whose lines a test reads back: level, message and metadata, in the order they were logged.
public final class CapturedLog: Sendable {
    public struct Line: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let captured = Mutex<[Line]>([])

    public init() {}

    /// Every line logged so far.
    public var lines: [Line] { captured.withLock { $0 } }

    /// A logger at `level` that writes here.
    public func logger(label: String = "test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) {
        captured.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Line(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
