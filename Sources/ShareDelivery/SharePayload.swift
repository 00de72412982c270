import Foundation
import StrictJSON
import WorkoutEngine
import WorkoutProtocol

/// The JSON document a sink delivers: the share and the workout it shares.
///
/// Dates are ISO 8601 in UTC, except `workout.date`, which keeps the wearable's own wire form.
public struct SharePayload: Sendable, Hashable {
    public var share: ShareRecord
    public var workout: WorkoutRecord

    public init(share: ShareRecord, workout: WorkoutRecord) {
        self.share = share
        self.workout = workout
    }

    public var shareID: Int64 { share.id }

    /// Compact JSON, no trailing newline.
    public func json() throws -> Data {
        try JSONEncoder.compactSorted().encode(Document(self))
    }

    private struct Document: Encodable {
        struct WorkoutDocument: Encodable {
            var id: Int64
            var device: String
            var location: String
            var date: String
            var intensityLevel: Int
            var startedAt: Date
            var endedAt: Date?
            var durationSeconds: Double?

            enum CodingKeys: String, CodingKey {
                case id, device, location, date, intensityLevel
                case startedAt = "started_at"
                case endedAt = "ended_at"
                case durationSeconds = "duration_seconds"
            }
        }

        var shareID: Int64
        var service: String
        var device: String
        var queuedAt: Date
        var workout: WorkoutDocument

        enum CodingKeys: String, CodingKey {
            case shareID = "share_id"
            case service, device
            case queuedAt = "queued_at"
            case workout
        }

        init(_ payload: SharePayload) throws {
            shareID = payload.share.id
            service = payload.share.service.rawValue
            device = payload.share.device.rawValue
            queuedAt = payload.share.queuedAt
            let workout = payload.workout
            self.workout = WorkoutDocument(
                id: workout.id,
                device: workout.device.rawValue,
                location: workout.location,
                date: try WorkoutDateTransformer().encode(workout.date),
                intensityLevel: workout.intensityLevel,
                startedAt: workout.startedAt,
                endedAt: workout.endedAt,
                durationSeconds: workout.durationSeconds
            )
        }
    }
}
