import Foundation

extension JSONEncoder {
    /// Compact, key-sorted JSON with `/` left unescaped.
    ///
    /// How the daemon and its tools write every JSON document (the control socket, share payloads, `workoutd … --json`,
    /// values stored in SQLite), so two writers of the same value write the same bytes.
    /// - Parameter iso8601Dates: dates as ISO 8601 text, for what people and other programs read; off for
    ///   stored values, which keep the encoder's default (seconds since 2001) they were first written with.
    public static func compactSorted(iso8601Dates: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if iso8601Dates { encoder.dateEncodingStrategy = .iso8601 }
        return encoder
    }
}
