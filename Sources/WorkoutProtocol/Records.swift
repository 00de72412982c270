import Foundation

/// A workout as the daemon keeps it: the wearable's command plus the daemon's own timestamps.
public struct WorkoutRecord: Hashable, Sendable, Codable {
    public var id: Int64
    public var device: DeviceIdentity
    /// The name people gave the device (`workoutctl label`).
    ///
    /// Filled in where the record is shown, never stored with it.
    public var deviceName: String?
    public var location: String
    /// The date the wearable sent, on its clock.
    public var date: Date
    public var intensityLevel: Int
    /// When the daemon started and ended it, on the daemon's clock.
    public var startedAt: Date { didSet { updateDuration() } }
    public var endedAt: Date? { didSet { updateDuration() } }
    /// Computed once from the daemon's own timestamps and carried as is (JSON, the control socket).
    ///
    /// So a view that gets the dates at a coarser precision still shows the same duration.
    public private(set) var durationSeconds: Double?
    public var startCommandID: CommandID?
    public var endCommandID: CommandID?
    /// Set when `startedAt`/`endedAt` were taken before the system clock was synchronised.
    ///
    /// See ``WorkoutClockMark``.
    public var clockMark: WorkoutClockMark?
    /// The boot-time clock at the start and the end.
    ///
    /// Nil from a clock without one, and for rows stored without a mark. It is what the duration is measured on while
    /// the hub stays up, and what a correction starts from.
    public var startedBoot: BootInstant?
    public var endedBoot: BootInstant?

    /// Whether the wearable's `date` is within ``PlausibleWorkoutDate``; a flagged date is shown as such.
    public var dateIsPlausible: Bool {
        PlausibleWorkoutDate.contains(date, startedAt: startedAt, clockTrusted: clockMark != .unsynchronized)
    }

    public init(
        id: Int64,
        device: DeviceIdentity,
        workout: Workout,
        startedAt: Date,
        endedAt: Date? = nil,
        startCommandID: CommandID? = nil,
        endCommandID: CommandID? = nil
    ) {
        self.id = id
        self.device = device
        self.location = workout.location
        self.date = workout.date
        self.intensityLevel = workout.intensityLevel
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.startCommandID = startCommandID
        self.endCommandID = endCommandID
        updateDuration()
    }

    private mutating func updateDuration() {
        durationSeconds = endedAt.map { WorkoutDuration.seconds(from: startedAt, to: $0) }
    }

    /// The boot-clock readings are bookkeeping: a record equals its stored copy without them.
    ///
    /// They are kept only where they may still be needed (the active workout, unsynchronised rows).
    public static func == (lhs: WorkoutRecord, rhs: WorkoutRecord) -> Bool {
        lhs.id == rhs.id && lhs.device == rhs.device && lhs.deviceName == rhs.deviceName
            && lhs.location == rhs.location && lhs.date == rhs.date
            && lhs.intensityLevel == rhs.intensityLevel && lhs.startedAt == rhs.startedAt && lhs.endedAt == rhs.endedAt
            && lhs.durationSeconds == rhs.durationSeconds && lhs.startCommandID == rhs.startCommandID
            && lhs.endCommandID == rhs.endCommandID && lhs.clockMark == rhs.clockMark
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(device)
        hasher.combine(startedAt)
        hasher.combine(endedAt)
    }
}

/// The record's JSON: every field, plus `flags`, so a reader needs no rule of its own to tell them.
extension WorkoutRecord {
    enum CodingKeys: String, CodingKey {
        case id, device, deviceName, location, date, intensityLevel, startedAt, endedAt, durationSeconds
        case startCommandID, endCommandID, clockMark, startedBoot, endedBoot
        /// Written, never read: derived from the other fields, so a reader cannot get it out of step.
        case flags
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        device = try container.decode(DeviceIdentity.self, forKey: .device)
        deviceName = try container.decodeIfPresent(String.self, forKey: .deviceName)
        location = try container.decode(String.self, forKey: .location)
        date = try container.decode(Date.self, forKey: .date)
        intensityLevel = try container.decode(Int.self, forKey: .intensityLevel)
        startedAt = try container.decode(Date.self, forKey: .startedAt)
        endedAt = try container.decodeIfPresent(Date.self, forKey: .endedAt)
        durationSeconds = try container.decodeIfPresent(Double.self, forKey: .durationSeconds)
        startCommandID = try container.decodeIfPresent(CommandID.self, forKey: .startCommandID)
        endCommandID = try container.decodeIfPresent(CommandID.self, forKey: .endCommandID)
        clockMark = try container.decodeIfPresent(WorkoutClockMark.self, forKey: .clockMark)
        startedBoot = try container.decodeIfPresent(BootInstant.self, forKey: .startedBoot)
        endedBoot = try container.decodeIfPresent(BootInstant.self, forKey: .endedBoot)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(device, forKey: .device)
        try container.encodeIfPresent(deviceName, forKey: .deviceName)
        try container.encode(location, forKey: .location)
        try container.encode(date, forKey: .date)
        try container.encode(intensityLevel, forKey: .intensityLevel)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encodeIfPresent(endedAt, forKey: .endedAt)
        try container.encodeIfPresent(durationSeconds, forKey: .durationSeconds)
        try container.encodeIfPresent(startCommandID, forKey: .startCommandID)
        try container.encodeIfPresent(endCommandID, forKey: .endCommandID)
        try container.encodeIfPresent(clockMark, forKey: .clockMark)
        try container.encodeIfPresent(startedBoot, forKey: .startedBoot)
        try container.encodeIfPresent(endedBoot, forKey: .endedBoot)
        try container.encode(flags, forKey: .flags)
    }
}

/// A request to share a finished workout, queued durably before the wearable is told `ok`.
public struct ShareRecord: Hashable, Sendable, Codable {
    public enum Status: String, Hashable, Sendable, Codable {
        case pending
        case delivered
    }

    public var id: Int64
    public var workoutID: Int64
    public var device: DeviceIdentity
    /// The device's name (`workoutctl label`), as ``WorkoutRecord/deviceName``.
    public var deviceName: String?
    public var service: ShareService
    public var queuedAt: Date
    public var status: Status
    public var attempts: Int
    public var lastError: String?
    public var deliveredAt: Date?
    /// Earliest time of the next attempt; backoff after a failure moves it forward.
    public var nextAttemptAt: Date
    public var commandID: CommandID?

    public init(
        id: Int64,
        workoutID: Int64,
        device: DeviceIdentity,
        service: ShareService,
        queuedAt: Date,
        commandID: CommandID? = nil
    ) {
        self.id = id
        self.workoutID = workoutID
        self.device = device
        self.service = service
        self.queuedAt = queuedAt
        self.status = .pending
        self.attempts = 0
        self.nextAttemptAt = queuedAt
        self.commandID = commandID
    }
}
