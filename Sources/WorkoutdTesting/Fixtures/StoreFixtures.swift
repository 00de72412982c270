import Foundation
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// A fresh directory under /tmp, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = #function) throws {
        let name = "workoutd-test-\(label.filter(\.isLetter).prefix(40))-\(UUID().uuidString.prefix(8))"
        path = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Lines as the transport would hand them to a session.
public enum DecodedLines {
    public static let date = Date(timeIntervalSince1970: 1_584_387_913)  // 2020-03-16 19:45:13 +0000

    public static func start(_ id: Int64?, location: String = "Gary's Gym", intensity: Int = 5) -> DecodedLine {
        DecodedLine(
            id: id.map(CommandID.integer),
            command: .success(.startWorkout(Workout(location: location, date: date, intensityLevel: intensity)))
        )
    }

    public static func end(_ id: Int64?) -> DecodedLine {
        DecodedLine(id: id.map(CommandID.integer), command: .success(.endWorkout))
    }

    public static func share(_ id: Int64?, _ service: ShareService = .twitter) -> DecodedLine {
        DecodedLine(id: id.map(CommandID.integer), command: .success(.shareWorkout(service)))
    }
}

extension Reply {
    /// The line the daemon writes for this reply, without the newline.
    public var line: String {
        String(decoding: ReplyEncoder().encodeLine(self).dropLast(), as: UTF8.self)
    }
}

/// A clock tests move by hand.
public final class ManualClock: Sendable {
    private let now: Mutex<Date>
    public init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { now = Mutex(start) }
    public func callAsFunction() -> Date { now.withLock { $0 } }
    public func advance(by seconds: TimeInterval) { now.withLock { $0 += seconds } }
}

/// Waits for a condition that another task makes true, failing after `timeout`.
public func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
