import Foundation

extension Command {
    /// The command of a well-formed line, read straight from its parsed object; nil whenever anything is
    /// missing, mistyped, out of range or unusual, and the line then goes through `init(from:)`.
    ///
    /// Every command comes through here, and decoding through `Codable` containers cost more than the rest
    /// of a command's handling. This accepts only what `init(from:)` accepts, with the same result, and
    /// leaves every error to it, so replies are unchanged (the flat-decoding parity tests compare whole
    /// lines against `JSONDecoder`).
    init?(wellFormed object: FlatJSONObject) {
        guard case .string(let raw)? = object["command_type"], let type = CommandType(rawValue: raw) else { return nil }
        switch type {
        case .endWorkout:
            self = .endWorkout
        case .shareWorkout:
            guard case .string(let name)? = object["service"], let service = ShareService(rawValue: name) else { return nil }
            self = .shareWorkout(service)
        case .startWorkout:
            guard case .string(let location)? = object[Workout.CodingKeys.location.stringValue],
                  location.utf8.count <= Workout.maximumLocationLength, !location.isBlank,
                  case .integer(let level)? = object[Workout.CodingKeys.intensityLevel.stringValue],
                  let intensity = Int(exactly: level), Workout.intensityRange.contains(intensity),
                  case .string(let text)? = object[Workout.CodingKeys.date.stringValue],
                  let date = WireDateParser.parse(text)
            else { return nil }
            self = .startWorkout(Workout(location: location, date: date, intensityLevel: intensity))
        }
    }
}

extension String {
    /// Whether every character is whitespace (an empty string is blank). A printable ASCII first byte answers
    /// without walking the characters, which costs a grapheme-breaking pass per command.
    fileprivate var isBlank: Bool {
        if let first = utf8.first, first > 0x20, first < 0x7F { return false }
        return allSatisfy(\.isWhitespace)
    }
}
