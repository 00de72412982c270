import Foundation

/// What a successful command produced, one case per command.
public enum Acknowledgement: Hashable, Sendable {
    case workoutStarted(workoutID: Int64)
    case workoutEnded(workoutID: Int64, durationSeconds: Double)
    case workoutShared(workoutID: Int64, service: ShareService, shareID: Int64)

    public var commandType: CommandType {
        switch self {
        case .workoutStarted: .startWorkout
        case .workoutEnded: .endWorkout
        case .workoutShared: .shareWorkout
        }
    }
}

/// One reply line: `{"status":"ok","command_type":...}` or `{"status":"error","error":{...}}`.
public struct Reply: Hashable, Sendable {
    public enum Outcome: Hashable, Sendable {
        case ok(Acknowledgement)
        case error(ProtocolError)
    }

    public var id: CommandID?
    public var outcome: Outcome
    /// Set when the reply is a stored one sent again for a retried `id`.
    public var replayed: Bool

    public init(id: CommandID?, outcome: Outcome, replayed: Bool = false) {
        self.id = id
        self.outcome = outcome
        self.replayed = replayed
    }

    public static func ok(_ ack: Acknowledgement, id: CommandID?) -> Reply { Reply(id: id, outcome: .ok(ack)) }
    public static func error(_ error: ProtocolError, id: CommandID?) -> Reply { Reply(id: id, outcome: .error(error)) }

    public var isSuccess: Bool {
        if case .ok = outcome { true } else { false }
    }

    /// The command a success acknowledges (an error reply does not say).
    public var acknowledgedCommand: CommandType? {
        if case .ok(let ack) = outcome { ack.commandType } else { nil }
    }

    /// The error code of a failure.
    public var errorCode: ErrorCode? {
        if case .error(let error) = outcome { error.code } else { nil }
    }
}

extension Reply: Codable {
    enum Status: String, Codable { case ok, error }

    enum CodingKeys: String, CodingKey {
        case status
        case commandType = "command_type"
        case id
        case workoutID = "workout_id"
        case durationSeconds = "duration_seconds"
        case service
        case shareID = "share_id"
        case error
        case replayed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch outcome {
        case .ok(let ack):
            try container.encode(Status.ok, forKey: .status)
            try container.encode(ack.commandType, forKey: .commandType)
            try container.encodeIfPresent(id, forKey: .id)
            switch ack {
            case .workoutStarted(let workoutID):
                try container.encode(workoutID, forKey: .workoutID)
            case .workoutEnded(let workoutID, let duration):
                try container.encode(workoutID, forKey: .workoutID)
                try container.encode(duration, forKey: .durationSeconds)
            case .workoutShared(let workoutID, let service, let shareID):
                try container.encode(workoutID, forKey: .workoutID)
                try container.encode(service, forKey: .service)
                try container.encode(shareID, forKey: .shareID)
            }
        case .error(let error):
            try container.encode(Status.error, forKey: .status)
            try container.encodeIfPresent(id, forKey: .id)
            try container.encode(error, forKey: .error)
        }
        if replayed { try container.encode(true, forKey: .replayed) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(CommandID.self, forKey: .id)
        replayed = try container.decodeIfPresent(Bool.self, forKey: .replayed) ?? false
        switch try container.decode(Status.self, forKey: .status) {
        case .error:
            outcome = .error(try container.decode(ProtocolError.self, forKey: .error))
        case .ok:
            let workoutID = try container.decode(Int64.self, forKey: .workoutID)
            switch try container.decode(CommandType.self, forKey: .commandType) {
            case .startWorkout:
                outcome = .ok(.workoutStarted(workoutID: workoutID))
            case .endWorkout:
                outcome = .ok(
                    .workoutEnded(
                        workoutID: workoutID,
                        durationSeconds: try container.decode(Double.self, forKey: .durationSeconds)
                    )
                )
            case .shareWorkout:
                outcome = .ok(
                    .workoutShared(
                        workoutID: workoutID,
                        service: try container.decode(ShareService.self, forKey: .service),
                        shareID: try container.decode(Int64.self, forKey: .shareID)
                    )
                )
            }
        }
    }
}
