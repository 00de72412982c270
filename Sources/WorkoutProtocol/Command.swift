import Foundation

/// The value of `command_type`: which command a line carries.
public enum CommandType: String, Codable, Sendable, CaseIterable {
    case startWorkout = "start_workout"
    case endWorkout = "end_workout"
    case shareWorkout = "share_workout"
}

/// A service a finished workout can be shared to.
public enum ShareService: String, Codable, Sendable, CaseIterable {
    case facebook
    case instagram
    case twitter

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let service = ShareService(rawValue: raw) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "'\(decoder.codingPath.dottedPath)' must be one of \(Self.allCases.map(\.rawValue).joined(separator: ", ")); got '\(raw.truncatedForMessage)'."
                )
            )
        }
        self = service
    }
}

/// What the wearable says when a workout begins: where, when (the wearable's clock) and how hard.
public struct Workout: Hashable, Sendable {
    /// In characters: Unicode scalars, not grapheme clusters (see ``UntrustedText``).
    public static let maximumLocationLength = 256
    /// The most bytes of UTF-8 a stored location can take, whatever its characters.
    ///
    /// That is 256 scalars of at most 4 bytes each; grapheme clusters, counted before, let 3,750 bytes through.
    public static let maximumLocationBytes = maximumLocationLength * 4
    public static let intensityRange = 1...10

    public var location: String
    public var date: Date
    public var intensityLevel: Int

    public init(location: String, date: Date, intensityLevel: Int) {
        self.location = location
        self.date = date
        self.intensityLevel = intensityLevel
    }
}

extension Workout: Codable {
    enum CodingKeys: String, CodingKey {
        case location
        case date
        case intensityLevel
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let location = try container.decode(String.self, forKey: .location)
        if let problem = Self.problem(
            withLocation: location,
            field: (container.codingPath + [CodingKeys.location]).dottedPath
        ) {
            throw DecodingError.dataCorruptedError(forKey: .location, in: container, debugDescription: problem)
        }
        // Decoded as a number, not an Int: Foundation reports `5.5` for an Int as corrupt JSON with no
        // key path, which would send the wearable a `malformed_json` instead of naming the field.
        let number = try container.decode(Double.self, forKey: .intensityLevel)
        guard number.rounded() == number, let intensity = Int(exactly: number), Self.intensityRange.contains(intensity)
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .intensityLevel,
                in: container,
                debugDescription:
                    "'\((container.codingPath + [CodingKeys.intensityLevel]).dottedPath)' must be an integer from \(Self.intensityRange.lowerBound) to \(Self.intensityRange.upperBound); got \(number.formatted(.number.grouping(.never)))."
            )
        }
        self.location = location
        self.date = try container.decode(key: .date, transformer: WorkoutDateTransformer())
        self.intensityLevel = intensity
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(location, forKey: .location)
        try container.encode(date, forKey: .date, transformer: WorkoutDateTransformer())
        try container.encode(intensityLevel, forKey: .intensityLevel)
    }
}

extension Workout {
    /// Why `location` cannot be stored, as the reply's message naming `field`; nil when it can. The one check
    /// both decoding paths make, so they refuse the same locations with the same words.
    static func problem(withLocation location: String, field: @autoclosure () -> String) -> String? {
        // A scalar is one to four bytes: counting scalars is needed only past 256 bytes, and 256 scalars are
        // at most 1,024 bytes (``maximumLocationBytes``), so that limit needs no check of its own.
        if location.utf8.count > maximumLocationLength {
            let scalars = location.unicodeScalars.count
            if scalars > maximumLocationLength {
                return "'\(field())' must be at most \(maximumLocationLength) characters; got \(scalars)."
            }
        }
        if let finding = UntrustedText.firstForbidden(in: location) { return finding.message(field: field()) }
        if location.isBlank { return "'\(field())' must not be empty." }
        return nil
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

/// One command from the wearable.
///
/// Decoded by reading `command_type` first, then the case's payload from the same object, so the
/// payload's keys sit beside `command_type` on the wire rather than nested under it.
public enum Command: Hashable, Sendable {
    case startWorkout(Workout)
    case endWorkout
    case shareWorkout(ShareService)

    public var type: CommandType {
        switch self {
        case .startWorkout: .startWorkout
        case .endWorkout: .endWorkout
        case .shareWorkout: .shareWorkout
        }
    }
}

extension Command: Codable {
    enum CodingKeys: String, CodingKey {
        case commandType = "command_type"
        case service
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let raw = try container.decode(String.self, forKey: .commandType)
        guard let type = CommandType(rawValue: raw) else {
            throw UnknownCommandError(commandType: raw)
        }
        switch type {
        case .startWorkout:
            self = .startWorkout(try Workout(from: decoder))
        case .endWorkout:
            self = .endWorkout
        case .shareWorkout:
            self = .shareWorkout(try container.decode(ShareService.self, forKey: .service))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .commandType)
        switch self {
        case .startWorkout(let workout):
            try workout.encode(to: encoder)
        case .endWorkout:
            break
        case .shareWorkout(let service):
            try container.encode(service, forKey: .service)
        }
    }
}

/// Thrown while decoding when `command_type` names no command we know.
public struct UnknownCommandError: Error, Sendable {
    public var commandType: String
}
