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
        guard let (values, binds) = valueRows(workouts, columns: 9, { workout, binds in
            binds.append(hubID)
            binds.append(workout.id)
            binds.append(workout.device.rawValue)
            binds.append(workout.location)
            binds.append(workout.intensityLevel)
            binds.append(workout.date)
            binds.append(workout.startedAt)
            binds.append(workout.endedAt)
            binds.append(workout.endedAt.map { $0.timeIntervalSince(workout.startedAt) })
        }) else { return nil }
        return PostgresQuery(unsafeSQL: """
            INSERT INTO workouts (hub_id, workout_id, device_id, location, intensity_level, date, started_at, ended_at, duration_seconds)
            VALUES \(values)
            ON CONFLICT (hub_id, workout_id) DO UPDATE SET
                ended_at = COALESCE(workouts.ended_at, excluded.ended_at),
                duration_seconds = COALESCE(workouts.duration_seconds, excluded.duration_seconds)
            """, binds: binds)
    }

    /// A share never changes once queued centrally.
    static func shares(_ shares: [ShareRecord], hubID: String) throws -> PostgresQuery? {
        guard let (values, binds) = valueRows(shares, columns: 5, { share, binds in
            binds.append(hubID)
            binds.append(share.id)
            binds.append(share.workoutID)
            binds.append(share.service.rawValue)
            binds.append(share.queuedAt)
        }) else { return nil }
        return PostgresQuery(unsafeSQL: """
            INSERT INTO shares (hub_id, share_id, workout_id, service, queued_at)
            VALUES \(values)
            ON CONFLICT (hub_id, share_id) DO NOTHING
            """, binds: binds)
    }

    /// `($1, …, $n), ($n+1, …)` for the records, with `bind` appending each record's `columns` values in column
    /// order; `nil` for no records (an INSERT needs at least one row).
    private static func valueRows<Record>(
        _ records: [Record], columns: Int, _ bind: (Record, inout PostgresBindings) -> Void
    ) -> (String, PostgresBindings)? {
        guard !records.isEmpty else { return nil }
        var binds = PostgresBindings(capacity: records.count * columns)
        var rows: [String] = []
        rows.reserveCapacity(records.count)
        for record in records {
            let first = binds.count + 1
            rows.append("(" + (first..<first + columns).map { "$\($0)" }.joined(separator: ", ") + ")")
            bind(record, &binds)
        }
        return (rows.joined(separator: ", "), binds)
    }
}
