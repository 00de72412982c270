import Foundation
import StrictJSON
import WorkoutProtocol

/// Where the daemon listens unless configured otherwise, and how lines on the socket are encoded.
public enum ControlSocket {
    public static let defaultPath = "/run/workoutd/control.sock"
    /// Longest request line the server reads; longer ones get `request_too_long`.
    public static let maximumRequestBytes = 64 * 1024

    /// Compact, key-sorted JSON with ISO 8601 dates: both ends use the same settings.
    public static func makeEncoder() -> JSONEncoder {
        JSONEncoder.compactSorted()
    }

    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// `value` as one line, newline included.
    public static func line(_ value: some Encodable, encoder: JSONEncoder) throws -> [UInt8] {
        var bytes = Array(try encoder.encode(value))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
