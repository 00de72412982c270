import Foundation
import StrictJSON

extension Command {
    /// The command of a well-formed line, read straight from its parsed object.
    ///
    /// Nil whenever anything is missing, mistyped, out of range or unusual, and the line then goes through
    /// `init(from:)`.
    ///
    /// Every command comes through here, and decoding through `Codable` containers cost more than the rest
    /// of a command's handling. This accepts only what `init(from:)` accepts, with the same result, and
    /// leaves every error to it, so replies are unchanged (the flat-decoding parity tests compare whole
    /// lines against `JSONDecoder`).
    init?(wellFormed object: FlatJSONObject) {
        guard case .string(let raw)? = object.parsed("command_type"), let type = object.match(raw, CommandType.self)
        else { return nil }
        switch type {
        case .endWorkout:
            self = .endWorkout
        case .shareWorkout:
            guard case .string(let name)? = object.parsed("service"),
                let service = object.match(name, ShareService.self)
            else { return nil }
            self = .shareWorkout(service)
        case .startWorkout:
            guard case .string(let locationText)? = object.parsed("location"),
                case let location = object.string(locationText),
                Workout.problem(withLocation: location, field: "location") == nil,
                case .integer(let level)? = object.parsed("intensityLevel"),
                let intensity = Int(exactly: level), Workout.intensityRange.contains(intensity),
                case .string(let dateText)? = object.parsed("date"),
                let date = object.withUTF8(of: dateText, WireDateParser.parse)
            else { return nil }
            self = .startWorkout(Workout(location: location, date: date, intensityLevel: intensity))
        }
    }
}

extension FlatJSONObject {
    /// The case of `Vocabulary` whose raw value `text` is.
    ///
    /// By its bytes when it is plain, which spares making a `String` and the string switch of `init(rawValue:)`.
    fileprivate func match<Vocabulary: CaseIterable & RawRepresentable<String>>(
        _ text: Text,
        _: Vocabulary.Type
    ) -> Vocabulary? {
        let found = withPlainBytes(of: text) { bytes in
            Vocabulary.allCases.first { $0.rawValue.utf8.withContiguousStorageIfAvailable(bytes.sameBytes) ?? false }
        }
        return found ?? (text.plain ? nil : Vocabulary(rawValue: string(text)))
    }
}

extension CommandID: FlatScalarDecodable {
    package init?(flatValue: FlatJSONObject.Value) {
        switch flatValue {
        case .integer(let value): self = .integer(value)
        case .string(let value): self = .string(value)
        case .bool, .null: return nil
        }
    }
}

extension ShareService: FlatScalarDecodable {
    package init?(flatValue: FlatJSONObject.Value) {
        guard case .string(let raw) = flatValue else { return nil }
        self.init(rawValue: raw)
    }
}
