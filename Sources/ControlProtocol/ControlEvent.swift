import Foundation
import WorkoutProtocol

/// One line of the event stream: `{"event":{"seq":12,"time":"…","type":"reply_sent","device":"A",…}}`.
///
/// `seq` increases by one per event the daemon produced, so a client can tell when it missed some.
public struct ControlEvent: Hashable, Sendable {
    public var sequence: UInt64
    public var time: Date
    public var detail: Detail

    public init(sequence: UInt64, time: Date, detail: Detail) {
        self.sequence = sequence
        self.time = time
        self.detail = detail
    }

    /// Where a command came from: the device's own line, or `send` on the control socket.
    public enum Origin: String, Codable, Hashable, Sendable {
        case device
        case control
    }

    /// What happened.
    public enum Detail: Hashable, Sendable {
        case deviceAdded(device: String, node: String)
        case deviceRemoved(device: String, node: String)
        /// `commandType` is `nil` for a line that did not decode into a command.
        case commandReceived(device: String, commandType: CommandType?, id: CommandID?, origin: Origin)
        case replySent(device: String, reply: Reply, origin: Origin)
        case workoutStarted(WorkoutRecord)
        case workoutEnded(WorkoutRecord)
        case shareQueued(ShareRecord)
        case shareDelivered(ShareRecord)
        case shareFailed(ShareRecord, error: String)
        case storageFailed(device: String, reason: String)

        /// The `type` string on the wire.
        public var type: EventType {
            switch self {
            case .deviceAdded: .deviceAdded
            case .deviceRemoved: .deviceRemoved
            case .commandReceived: .commandReceived
            case .replySent: .replySent
            case .workoutStarted: .workoutStarted
            case .workoutEnded: .workoutEnded
            case .shareQueued: .shareQueued
            case .shareDelivered: .shareDelivered
            case .shareFailed: .shareFailed
            case .storageFailed: .storageFailed
            }
        }

        /// The device the event concerns.
        public var device: String {
            switch self {
            case .deviceAdded(let device, _), .deviceRemoved(let device, _),
                .commandReceived(let device, _, _, _), .replySent(let device, _, _),
                .storageFailed(let device, _):
                device
            case .workoutStarted(let workout), .workoutEnded(let workout):
                workout.device.rawValue
            case .shareQueued(let share), .shareDelivered(let share), .shareFailed(let share, _):
                share.device.rawValue
            }
        }
    }

    /// The value of an event's `type`.
    public enum EventType: String, Codable, Hashable, Sendable, CaseIterable {
        case deviceAdded = "device_added"
        case deviceRemoved = "device_removed"
        case commandReceived = "command_received"
        case replySent = "reply_sent"
        case workoutStarted = "workout_started"
        case workoutEnded = "workout_ended"
        case shareQueued = "share_queued"
        case shareDelivered = "share_delivered"
        case shareFailed = "share_failed"
        case storageFailed = "storage_failed"
    }
}

extension ControlEvent: Codable {
    enum CodingKeys: String, CodingKey {
        case sequence = "seq"
        case time, type, device, node
        case commandType = "command_type"
        case id, origin, reply
        case workout, share, error, reason
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sequence, forKey: .sequence)
        try container.encode(time, forKey: .time)
        try container.encode(detail.type, forKey: .type)
        try container.encode(detail.device, forKey: .device)
        switch detail {
        case .deviceAdded(_, let node), .deviceRemoved(_, let node):
            try container.encode(node, forKey: .node)
        case .commandReceived(_, let commandType, let id, let origin):
            try container.encodeIfPresent(commandType, forKey: .commandType)
            try container.encodeIfPresent(id, forKey: .id)
            try container.encode(origin, forKey: .origin)
        case .replySent(_, let reply, let origin):
            try container.encode(reply, forKey: .reply)
            try container.encode(origin, forKey: .origin)
        case .workoutStarted(let workout), .workoutEnded(let workout):
            try container.encode(workout, forKey: .workout)
        case .shareQueued(let share), .shareDelivered(let share):
            try container.encode(share, forKey: .share)
        case .shareFailed(let share, let error):
            try container.encode(share, forKey: .share)
            try container.encode(error, forKey: .error)
        case .storageFailed(_, let reason):
            try container.encode(reason, forKey: .reason)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        time = try container.decode(Date.self, forKey: .time)
        let device = try container.decode(String.self, forKey: .device)
        switch try container.decode(EventType.self, forKey: .type) {
        case .deviceAdded:
            detail = .deviceAdded(device: device, node: try container.decode(String.self, forKey: .node))
        case .deviceRemoved:
            detail = .deviceRemoved(device: device, node: try container.decode(String.self, forKey: .node))
        case .commandReceived:
            detail = .commandReceived(
                device: device,
                commandType: try container.decodeIfPresent(CommandType.self, forKey: .commandType),
                id: try container.decodeIfPresent(CommandID.self, forKey: .id),
                origin: try container.decode(Origin.self, forKey: .origin)
            )
        case .replySent:
            detail = .replySent(
                device: device,
                reply: try container.decode(Reply.self, forKey: .reply),
                origin: try container.decode(Origin.self, forKey: .origin)
            )
        case .workoutStarted:
            detail = .workoutStarted(try container.decode(WorkoutRecord.self, forKey: .workout))
        case .workoutEnded:
            detail = .workoutEnded(try container.decode(WorkoutRecord.self, forKey: .workout))
        case .shareQueued:
            detail = .shareQueued(try container.decode(ShareRecord.self, forKey: .share))
        case .shareDelivered:
            detail = .shareDelivered(try container.decode(ShareRecord.self, forKey: .share))
        case .shareFailed:
            detail = .shareFailed(
                try container.decode(ShareRecord.self, forKey: .share),
                error: try container.decode(String.self, forKey: .error)
            )
        case .storageFailed:
            detail = .storageFailed(device: device, reason: try container.decode(String.self, forKey: .reason))
        }
    }
}

/// The wrapper that marks a line of the stream as an event rather than a reply: `{"event":{…}}`.
public struct ControlEventLine: Codable, Hashable, Sendable {
    public var event: ControlEvent
    public init(event: ControlEvent) { self.event = event }
}
