import StrictJSON

/// The `code` of an error reply. The raw values are the wire protocol: never rename one.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    case malformedJSON = "malformed_json"
    case unknownCommand = "unknown_command"
    case invalidField = "invalid_field"
    case lineTooLong = "line_too_long"
    case workoutAlreadyActive = "workout_already_active"
    case noActiveWorkout = "no_active_workout"
    case nothingToShare = "nothing_to_share"
    case storageUnavailable = "storage_unavailable"
    /// The device sent more commands than its token bucket allows.
    ///
    /// The bucket is `limits.commands_per_second` and `limits.command_burst`.
    case rateLimited = "rate_limited"
    /// The device already has `limits.pending_shares_per_device` shares waiting for delivery.
    case tooManyPendingShares = "too_many_pending_shares"
    /// The database is at `storage.max_database_bytes`: no new workouts until it has room.
    case storageFull = "storage_full"
}

/// The `error` object of a failure reply: a code for programs, a key path and a sentence for people.
public struct ProtocolError: Error, Hashable, Sendable, Codable {
    public var code: ErrorCode
    public var field: String?
    /// `retry_after_ms`, beside `code` like `field`.
    ///
    /// For `rate_limited`, when the device's next command is accepted again (at least one token back in its bucket).
    public var retryAfterMilliseconds: Int64?
    public var message: String

    public init(code: ErrorCode, field: String? = nil, retryAfterMilliseconds: Int64? = nil, message: String) {
        self.code = code
        self.field = field
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.message = message
    }

    /// The wire order: `code`, `field`, `retry_after_ms`, `message` (what ``ReplyEncoder`` writes too).
    enum CodingKeys: String, CodingKey {
        case code, field
        case retryAfterMilliseconds = "retry_after_ms"
        case message
    }
}

extension ProtocolError {
    public static func lineTooLong(limit: Int) -> ProtocolError {
        ProtocolError(
            code: .lineTooLong,
            message: "The line was longer than \(limit) bytes and was discarded; send one command per line."
        )
    }

    /// A line that is not JSON: what the reader expected and at which byte.
    public static func malformedJSON(_ error: JSONSyntaxError) -> ProtocolError {
        ProtocolError(code: .malformedJSON, message: "The line is not valid JSON: \(error.description).")
    }

    public static let workoutAlreadyActive = ProtocolError(
        code: .workoutAlreadyActive,
        message: "A workout is already active on this device; end it before starting another."
    )
    public static let noActiveWorkout = ProtocolError(
        code: .noActiveWorkout,
        message: "No workout is active on this device; start one first."
    )
    public static let nothingToShare = ProtocolError(
        code: .nothingToShare,
        message: "This device has no finished workout to share; end a workout first."
    )
    public static let storageUnavailable = ProtocolError(
        code: .storageUnavailable,
        message: "The command could not be saved because storage is unavailable; nothing was changed, retry later."
    )

    /// A command over the device's rate limit: it ran and stored nothing.
    public static func rateLimited(retryAfterMilliseconds: Int64) -> ProtocolError {
        ProtocolError(
            code: .rateLimited,
            retryAfterMilliseconds: retryAfterMilliseconds,
            message: "Too many commands from this device; nothing was done, retry after \(retryAfterMilliseconds) ms."
        )
    }

    public static func tooManyPendingShares(limit: Int) -> ProtocolError {
        ProtocolError(
            code: .tooManyPendingShares,
            message:
                "This device already has \(limit) shares waiting for delivery; nothing was queued, retry once they are delivered."
        )
    }

    public static let storageFull = ProtocolError(
        code: .storageFull,
        message: "The hub's storage is full; no new workout can start (ending and sharing stored ones still works)."
    )

    /// Maps a decoding failure to the reply's code and field, using the error's coding path.
    public init(decoding error: any Error) {
        self.init(decoding: error, found: { _ in nil })
    }

    /// The same, with the value the line held at a key path (`found`) quoted in a type error.
    init(decoding error: any Error, found: ([any CodingKey]) -> FoundValue?) {
        switch error {
        case let unknown as UnknownCommandError:
            self.init(
                code: .unknownCommand,
                field: "command_type",
                message:
                    "'command_type' must be one of \(CommandType.allCases.map(\.rawValue).joined(separator: ", ")); got '\(unknown.commandType.truncatedForMessage)'."
            )
        case let error as DecodingError:
            self.init(decodingError: error, found: found)
        default:
            self.init(code: .malformedJSON, message: "The line is not valid JSON: send one JSON object per line.")
        }
    }

    private init(decodingError error: DecodingError, found: ([any CodingKey]) -> FoundValue?) {
        switch error {
        case .keyNotFound(let key, let context):
            let path = (context.codingPath + [key]).dottedPath
            if path == "command_type" {
                self.init(
                    code: .unknownCommand,
                    field: path,
                    message: "The key 'command_type' is missing; every command needs one."
                )
            } else {
                self.init(code: .invalidField, field: path, message: "The key '\(path)' is required for this command.")
            }
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let path = context.codingPath.dottedPath
            let got = found(context.codingPath).map { "; got \($0.description)" } ?? ""
            if path.isEmpty {
                self.init(
                    code: .malformedJSON,
                    message: "The line must be a JSON object, like {\"command_type\":\"end_workout\"}."
                )
            } else if path == "command_type" {
                self.init(
                    code: .unknownCommand,
                    field: path,
                    message: "'command_type' must be a string naming a command\(got)."
                )
            } else {
                self.init(code: .invalidField, field: path, message: "'\(path)' must be \(Self.describe(type))\(got).")
            }
        case .dataCorrupted(let context):
            let path = context.codingPath.dottedPath
            if path.isEmpty {
                self.init(
                    code: .malformedJSON,
                    message: "The line is not valid JSON (or not UTF-8): send one JSON object per line."
                )
            } else {
                self.init(code: .invalidField, field: path, message: context.debugDescription)
            }
        @unknown default:
            self.init(code: .malformedJSON, message: "The line could not be decoded.")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        // Foundation's JSONDecoder names Double, not the Int asked for, when an integer field holds a string;
        // every numeric command field is an integer.
        case is Int.Type, is Int64.Type, is Double.Type: "an integer"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is CommandID.Type: "a string or an integer"
        default: "of type \(type)"
        }
    }
}
