import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// A row of the `share` table: one ``ShareRecord`` and its delivery state.
struct ShareRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "share"

    var id: Int64
    var workoutID: Int64
    var device: String
    var service: String
    var queuedAt: Date
    var status: String
    var attempts: Int
    var lastError: String?
    var deliveredAt: Date?
    var nextAttemptAt: Date
    var commandID: String?

    /// The table's columns, one per stored property: the list the commit's SQL is written from.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, workoutID, device, service, queuedAt, status, attempts, lastError, deliveredAt, nextAttemptAt,
            commandID
    }

    /// The condition of the `share_pending` partial index, written out in every query meant to use it.
    ///
    /// SQLite uses a partial index only for a WHERE that contains its condition literally (not as a bound value).
    static let isPendingSQL = "status = '\(ShareRecord.Status.pending.rawValue)'"

    /// A share is inserted once, when queued; deliveries update it in place.
    static let insertSQL = RowSQL.insert(into: databaseTableName, columns: CodingKeys.allCases.map(\.rawValue))

    /// Binds the values in ``CodingKeys`` order, dates as seconds since 1970 (see the date strategies).
    func bind(to statement: inout BoundStatement) {
        statement.bind(id)
        statement.bind(workoutID)
        statement.bind(device)
        statement.bind(service)
        statement.bind(queuedAt.timeIntervalSince1970)
        statement.bind(status)
        statement.bind(attempts)
        statement.bind(lastError)
        statement.bind(deliveredAt?.timeIntervalSince1970)
        statement.bind(nextAttemptAt.timeIntervalSince1970)
        statement.bind(commandID)
    }

    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSince1970
    }
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSince1970
    }

    init(_ record: ShareRecord) throws {
        id = record.id
        workoutID = record.workoutID
        device = record.device.rawValue
        service = record.service.rawValue
        queuedAt = record.queuedAt
        status = record.status.rawValue
        attempts = record.attempts
        lastError = record.lastError
        deliveredAt = record.deliveredAt
        nextAttemptAt = record.nextAttemptAt
        commandID = record.commandID.map(StoredJSON.text(of:))
    }

    /// A stored `service` column as the service it names.
    static func service(_ stored: String) throws -> ShareService {
        guard let service = ShareService(rawValue: stored) else {
            throw StoredValueError(column: "share.service", value: stored)
        }
        return service
    }

    func record() throws -> ShareRecord {
        let service = try Self.service(service)
        guard let status = ShareRecord.Status(rawValue: status) else {
            throw StoredValueError(column: "share.status", value: status)
        }
        var record = ShareRecord(
            id: id,
            workoutID: workoutID,
            device: DeviceIdentity(device),
            service: service,
            queuedAt: queuedAt,
            commandID: try commandID.map { try StoredJSON.decode(CommandID.self, from: $0) }
        )
        record.status = status
        record.attempts = attempts
        record.lastError = lastError
        record.deliveredAt = deliveredAt
        record.nextAttemptAt = nextAttemptAt
        return record
    }
}

/// A stored value this version cannot interpret (written by a newer version, or edited by hand).
struct StoredValueError: Error, CustomStringConvertible {
    var column: String
    var value: String
    var description: String { "unexpected value '\(value)' in \(column)" }
}
