import WorkoutProtocol

/// Where a device's session is: between workouts, or in one.
///
/// Codable with the case name as the key (`{"idle":true}`, `{"active":{...}}`), so the persisted
/// form reads plainly and a later case can be added without breaking old rows.
public enum SessionState: Hashable, Sendable {
    case idle
    case active(WorkoutRecord)

    public var activeWorkout: WorkoutRecord? {
        if case .active(let workout) = self { workout } else { nil }
    }
}

extension SessionState: Codable {
    enum CodingKeys: String, CodingKey {
        case idle
        case active
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .idle:
            try container.encode(true, forKey: .idle)
        case .active(let workout):
            try container.encode(workout, forKey: .active)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath,
                    debugDescription: "A session state has exactly one key: idle or active."
                )
            )
        }
        switch key {
        case .idle:
            self = .idle
        case .active:
            self = .active(try container.decode(WorkoutRecord.self, forKey: .active))
        }
    }
}
