import PostgresNIO
import WorkoutEngine
import WorkoutProtocol

/// A batch's changes as one upsert per table, each column of the batch one array parameter (`unnest`).
///
/// Why not one INSERT per change: each is a round trip and a statement the server parses and plans, 500 per
/// batch; on a hub that shares its cores with the devices (and in `make bench`, with the server) that work
/// competes with the device path. Why arrays and not a VALUES list with a parameter per value: the statement
/// then has a handful of parameters whatever the batch size, so the server parses and plans a short statement,
/// not thousands of rows of placeholders, and the hub encodes each column as one binary array instead of
/// formatting a placeholder per value. A batch holds each record at most once
/// (``ReplicationLog/pendingChanges(after:limit:)`` keeps a record's newest state only), which `ON CONFLICT DO UPDATE`
/// requires of one statement.
enum CentralUpserts {
    /// Started and ended columns only move forward: an ended row never goes back to active.
    /// Arrays cannot hold NULL here (postgres-nio encodes no optional elements), so `ended` says which rows
    /// have an end; the other rows' `ended_at` and `duration` elements are placeholders the CASE drops.
    static func workouts(_ workouts: [WorkoutRecord], hubID: String) -> PostgresQuery? {
        guard !workouts.isEmpty else { return nil }
        let ids = workouts.map(\.id)
        let devices = workouts.map(\.device.rawValue)
        let locations = workouts.map(\.location)
        let intensities = workouts.map(\.intensityLevel)
        let dates = workouts.map(\.date)
        let starts = workouts.map(\.startedAt)
        let ended = workouts.map { $0.endedAt != nil }
        let ends = workouts.map { $0.endedAt ?? $0.startedAt }
        let durations = workouts.map { workout in workout.endedAt.map { $0.timeIntervalSince(workout.startedAt) } ?? 0 }
        // '' for no mark (arrays hold no NULL here); NULLIF makes it NULL in the table.
        let marks = workouts.map { $0.clockMark?.rawValue ?? "" }
        // A workout whose times were corrected (taken before the hub's clock was synchronised) replaces the
        // times shipped before; otherwise they stay as first shipped.
        return """
            INSERT INTO workouts (hub_id, workout_id, device_id, location, intensity_level, date, started_at, ended_at, duration_seconds, clock_mark)
            SELECT \(hubID), id, device, location, intensity, date, started, CASE WHEN ended THEN ended_at END, CASE WHEN ended THEN duration END,
                   NULLIF(mark, '')
            FROM unnest(\(ids)::bigint[], \(devices)::text[], \(locations)::text[], \(intensities)::bigint[],
                        \(dates)::timestamptz[], \(starts)::timestamptz[], \(ended)::boolean[], \(ends)::timestamptz[], \(durations)::float8[],
                        \(marks)::text[])
                AS batch (id, device, location, intensity, date, started, ended, ended_at, duration, mark)
            ON CONFLICT (hub_id, workout_id) DO UPDATE SET
                started_at = CASE WHEN excluded.clock_mark = 'corrected' THEN excluded.started_at ELSE workouts.started_at END,
                ended_at = CASE WHEN excluded.clock_mark = 'corrected' AND excluded.ended_at IS NOT NULL THEN excluded.ended_at
                                ELSE COALESCE(workouts.ended_at, excluded.ended_at) END,
                duration_seconds = CASE WHEN excluded.clock_mark = 'corrected' AND excluded.duration_seconds IS NOT NULL THEN excluded.duration_seconds
                                        ELSE COALESCE(workouts.duration_seconds, excluded.duration_seconds) END,
                clock_mark = COALESCE(excluded.clock_mark, workouts.clock_mark)
            """
    }

    /// A share never changes once queued centrally.
    static func shares(_ shares: [ShareRecord], hubID: String) -> PostgresQuery? {
        guard !shares.isEmpty else { return nil }
        let ids = shares.map(\.id)
        let workoutIDs = shares.map(\.workoutID)
        let services = shares.map(\.service.rawValue)
        let queued = shares.map(\.queuedAt)
        return """
            INSERT INTO shares (hub_id, share_id, workout_id, service, queued_at)
            SELECT \(hubID), id, workout_id, service, queued_at
            FROM unnest(\(ids)::bigint[], \(workoutIDs)::bigint[], \(services)::text[], \(queued)::timestamptz[])
                AS batch (id, workout_id, service, queued_at)
            ON CONFLICT (hub_id, share_id) DO NOTHING
            """
    }
}
