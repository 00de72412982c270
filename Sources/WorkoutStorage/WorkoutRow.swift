import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// A row of the `workout` table: one ``WorkoutRecord``.
struct WorkoutRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "workout"

    var id: Int64
    var device: String
    var location: String
    var date: Date
    var intensityLevel: Int
    var startedAt: Date
    var endedAt: Date?
    var startCommandID: String?
    var endCommandID: String?

    /// The table's columns, one per stored property: the list the commit's SQL is written from.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, device, location, date, intensityLevel, startedAt, endedAt, startCommandID, endCommandID
    }

    /// Insert, or replace every column of the row with the same id.
    ///
    /// A workout is written when it starts and again when it ends.
    static let upsertSQL = RowSQL.insert(
        into: databaseTableName,
        columns: CodingKeys.allCases.map(\.rawValue),
        updatingOnConflictOf: "id"
    )

    /// Binds the values in ``CodingKeys`` order, dates as seconds since 1970 (see the date strategies).
    func bind(to statement: inout BoundStatement) {
        statement.bind(id)
        statement.bind(device)
        statement.bind(location)
        statement.bind(date.timeIntervalSince1970)
        statement.bind(intensityLevel)
        statement.bind(startedAt.timeIntervalSince1970)
        statement.bind(endedAt?.timeIntervalSince1970)
        statement.bind(startCommandID)
        statement.bind(endCommandID)
    }

    // Seconds since 1970 as REAL keep the daemon's clock exact across a restart; text dates stop at milliseconds.
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSince1970
    }
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSince1970
    }

    init(_ record: WorkoutRecord) throws {
        id = record.id
        device = record.device.rawValue
        location = record.location
        date = record.date
        intensityLevel = record.intensityLevel
        startedAt = record.startedAt
        endedAt = record.endedAt
        startCommandID = record.startCommandID.map(StoredJSON.text(of:))
        endCommandID = record.endCommandID.map(StoredJSON.text(of:))
    }

    func record() throws -> WorkoutRecord {
        WorkoutRecord(
            id: id,
            device: DeviceIdentity(device),
            workout: Workout(location: location, date: date, intensityLevel: intensityLevel),
            startedAt: startedAt,
            endedAt: endedAt,
            startCommandID: try startCommandID.map { try StoredJSON.decode(CommandID.self, from: $0) },
            endCommandID: try endCommandID.map { try StoredJSON.decode(CommandID.self, from: $0) }
        )
    }
}
