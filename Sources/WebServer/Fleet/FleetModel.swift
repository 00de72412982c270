import Foundation
import WorkoutProtocol

/// One hub as the fleet page shows it: its latest heartbeat, and whether that is recent.
struct FleetHub: Sendable, Encodable, Equatable {
    /// A hub's heartbeat interval when it has not said.
    ///
    /// That is `replication.heartbeat_interval_s`' default.
    static let defaultHeartbeatSeconds = 30
    /// Heartbeats a hub may miss before it is shown offline.
    static let missedHeartbeats = 3
    /// Hubs one answer lists at most, so a runaway table cannot make the page unbounded.
    static let maximumListed = 100_000

    var hubID: String
    var name: String?
    var version: String?
    var architecture: String?
    var startedAt: Date?
    var lastSeen: Date?
    var heartbeatIntervalSeconds: Int?
    /// Seen within ``missedHeartbeats`` heartbeat intervals, by the database's clock.
    var online: Bool
    var wearablesConnected: Int?
    var activeWorkouts: Int?
    /// Rows the hub had not yet shipped at its last heartbeat.
    var backlog: Int?
    var lastError: String?
    var centralHost: String?
    var workoutsToday: Int

    enum CodingKeys: String, CodingKey {
        case hubID = "hub_id"
        case name, version, architecture
        case startedAt = "started_at"
        case lastSeen = "last_seen"
        case heartbeatIntervalSeconds = "heartbeat_interval_s"
        case online
        case wearablesConnected = "wearables_connected"
        case activeWorkouts = "active_workouts"
        case backlog
        case lastError = "last_error"
        case centralHost = "central_host"
        case workoutsToday = "workouts_today"
    }

    /// Every key present, `null` where the hub has not said.
    ///
    /// An old hub, or one that never sent a heartbeat, leaves most of them unset.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hubID, forKey: .hubID)
        try container.encode(name, forKey: .name)
        try container.encode(version, forKey: .version)
        try container.encode(architecture, forKey: .architecture)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(lastSeen, forKey: .lastSeen)
        try container.encode(heartbeatIntervalSeconds, forKey: .heartbeatIntervalSeconds)
        try container.encode(online, forKey: .online)
        try container.encode(wearablesConnected, forKey: .wearablesConnected)
        try container.encode(activeWorkouts, forKey: .activeWorkouts)
        try container.encode(backlog, forKey: .backlog)
        try container.encode(lastError, forKey: .lastError)
        try container.encode(centralHost, forKey: .centralHost)
        try container.encode(workoutsToday, forKey: .workoutsToday)
    }
}

/// One workout as a hub shipped it.
struct FleetWorkout: Sendable, Encodable, Equatable {
    var hubID: String
    var workoutID: Int64
    var deviceID: String
    var location: String
    var intensityLevel: Int
    /// The wearable's own date for the workout.
    var date: Date
    var startedAt: Date
    var endedAt: Date?
    var durationSeconds: Double?
    var clockMark: String?

    enum CodingKeys: String, CodingKey {
        case hubID = "hub_id"
        case workoutID = "workout_id"
        case deviceID = "device_id"
        case location
        case intensityLevel = "intensity_level"
        case date
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case durationSeconds = "duration_seconds"
        case clockMark = "clock_mark"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hubID, forKey: .hubID)
        try container.encode(workoutID, forKey: .workoutID)
        try container.encode(deviceID, forKey: .deviceID)
        try container.encode(location, forKey: .location)
        try container.encode(intensityLevel, forKey: .intensityLevel)
        try container.encode(date, forKey: .date)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(endedAt, forKey: .endedAt)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(clockMark, forKey: .clockMark)
    }
}

/// The workouts filter of `/api/workouts` and the page: `hub`, `since`, `until` and `limit`.
///
/// Each is checked before any reaches the database.
///
/// `since` and `until` are an RFC 3339 time or a day (`2026-11-28`, in the page's time zone): `since` a day means from
/// its start, `until` a day means up to its end, so `since=D&until=D` is the day D. Any other parameter, a repeated
/// one or a value out of range is refused with the reason.
struct FleetWorkoutFilter: Sendable, Equatable {
    static let defaultLimit = 100
    static let maximumLimit = 1000
    /// Rows one CSV download holds at most.
    static let maximumCSVRows = 100_000

    var hub: String?
    var since: Date?
    var until: Date?
    var limit: Int

    struct Problem: Error, Equatable {
        var message: String
    }

    init(hub: String? = nil, since: Date? = nil, until: Date? = nil, limit: Int = Self.defaultLimit) {
        self.hub = hub
        self.since = since
        self.until = until
        self.limit = limit
    }

    /// The filter `parameters` describe, or what is wrong with them.
    static func parse(
        _ parameters: [(String, String)],
        maximumLimit: Int = Self.maximumLimit,
        defaultLimit: Int = Self.defaultLimit,
        timeZone: TimeZone = .current
    ) throws(Problem) -> FleetWorkoutFilter {
        var filter = FleetWorkoutFilter(limit: min(defaultLimit, maximumLimit))
        var seen: Set<String> = []
        for (name, value) in parameters {
            guard ["hub", "since", "until", "limit"].contains(name) else {
                throw Problem(
                    message:
                        "Unknown query parameter '\(Self.shown(name))'; the parameters are hub, since, until and limit."
                )
            }
            guard seen.insert(name).inserted else {
                throw Problem(message: "The query parameter '\(name)' is given more than once.")
            }
            // An empty value is no filter, as an HTML form sends an empty field.
            if value.isEmpty, name != "limit" { continue }
            switch name {
            case "hub":
                guard value.utf8.count <= 256,
                    !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else {
                    throw Problem(
                        message: "The query parameter 'hub' must be a hub id (1 to 256 bytes, no control characters)."
                    )
                }
                filter.hub = value
            case "since", "until":
                guard let date = Self.date(value, endOfDay: name == "until", timeZone: timeZone) else {
                    throw Problem(
                        message:
                            "The query parameter '\(name)' must be a day (2026-11-28) or a time in RFC 3339 (2026-11-28T07:00:00Z); got '\(Self.shown(value))'."
                    )
                }
                if name == "since" { filter.since = date } else { filter.until = date }
            default:
                guard let limit = Int(value), (1...maximumLimit).contains(limit) else {
                    throw Problem(
                        message: "The query parameter 'limit' must be 1 to \(maximumLimit); got '\(Self.shown(value))'."
                    )
                }
                filter.limit = limit
            }
        }
        if let since = filter.since, let until = filter.until, until < since {
            throw Problem(message: "The query parameter 'until' is before 'since'.")
        }
        return filter
    }

    /// The query string that asks for this filter again (for the page's CSV link), without the limit.
    var queryString: String {
        var items: [URLQueryItem] = []
        if let hub { items.append(URLQueryItem(name: "hub", value: hub)) }
        if let since { items.append(URLQueryItem(name: "since", value: since.ISO8601Format())) }
        if let until { items.append(URLQueryItem(name: "until", value: until.ISO8601Format())) }
        var components = URLComponents()
        components.queryItems = items
        let text = components.percentEncodedQuery ?? ""
        // `+` would read back as a space.
        return text.replacingOccurrences(of: "+", with: "%2B")
    }

    private static func date(_ text: String, endOfDay: Bool, timeZone: TimeZone) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        if text.utf8.count == 10 {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
                let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
                (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day)
            else { return nil }
            let calendar = PageTime.calendar(timeZone: timeZone)
            let components = DateComponents(year: year, month: month, day: day)
            guard calendar.date(from: components).map({ calendar.component(.day, from: $0) == day }) == true,
                let start = calendar.date(from: components)
            else { return nil }
            return endOfDay ? calendar.date(byAdding: .day, value: 1, to: start) : start
        }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// A value as a message repeats it: escaped and cut short.
    private static func shown(_ text: String) -> String {
        let cut = text.utf8.count > 64 ? String(decoding: Array(text.utf8.prefix(64)), as: UTF8.self) + "…" : text
        return UntrustedText.escaped(cut)
    }
}
