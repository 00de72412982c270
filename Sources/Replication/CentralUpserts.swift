import PostgresNIO
import WorkoutEngine
import WorkoutProtocol

/// A batch's changes as one multi-row upsert per table.
///
/// Why not one INSERT per change: each is a round trip and a statement the server parses and plans, 500 per
/// batch; on a hub that shares its cores with the devices (and in `make bench`, with the server) that work
/// competes with the device path. One statement per table per batch does the same upserts. A batch holds each
/// record at most once (``ReplicationLog/pendingChanges(limit:)`` keeps a record's newest state only), which
/// `ON CONFLICT DO UPDATE` requires of one statement; 9 parameters per workout stay far below PostgreSQL's
/// 65,535 per statement for any batch size we use.
enum CentralUpserts {
    /// Started and ended columns only move forward: an ended row never goes back to active.
    static func workouts(_ workouts: [WorkoutRecord], hubID: String) throws -> PostgresQuery? {
        guard !workouts.isEmpty else { return nil }
        var binds = PostgresBindings(capacity: workouts.count * 9)
        var rows: [String] = []
        rows.reserveCapacity(workouts.count)
        for workout in workouts {
            let first = binds.count + 1
            rows.append("(" + (first..<first + 9).map { "$\($0)" }.joined(separator: ", ") + ")")
            binds.append(hubID)
            binds.append(workout.id)
            binds.append(workout.device.rawValue)
            binds.append(workout.location)
            binds.append(workout.intensityLevel)
            binds.append(workout.date)
            binds.append(workout.startedAt)
            binds.append(workout.endedAt)
            binds.append(workout.endedAt.map { $0.timeIntervalSince(workout.startedAt) })
        }
        return PostgresQuery(unsafeSQL: """
            INSERT INTO workouts (hub_id, workout_id, device_id, location, intensity_level, date, started_at, ended_at, duration_seconds)
            VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (hub_id, workout_id) DO UPDATE SET
                ended_at = COALESCE(workouts.ended_at, excluded.ended_at),
                duration_seconds = COALESCE(workouts.duration_seconds, excluded.duration_seconds)
            """, binds: binds)
    }

    /// A share never changes once queued centrally.
    static func shares(_ shares: [ShareRecord], hubID: String) throws -> PostgresQuery? {
        guard !shares.isEmpty else { return nil }
        var binds = PostgresBindings(capacity: shares.count * 5)
        var rows: [String] = []
        rows.reserveCapacity(shares.count)
        for share in shares {
            let first = binds.count + 1
            rows.append("(" + (first..<first + 5).map { "$\($0)" }.joined(separator: ", ") + ")")
            binds.append(hubID)
            binds.append(share.id)
            binds.append(share.workoutID)
            binds.append(share.service.rawValue)
            binds.append(share.queuedAt)
        }
        return PostgresQuery(unsafeSQL: """
            INSERT INTO shares (hub_id, share_id, workout_id, service, queued_at)
            VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (hub_id, share_id) DO NOTHING
            """, binds: binds)
    }
}
