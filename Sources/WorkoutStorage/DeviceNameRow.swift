import Foundation
import GRDB
import WorkoutEngine
import WorkoutProtocol

/// The names people give wearables (`workoutctl label`): one row per named device, in `deviceName`.
enum DeviceNameRow {
    static let tableName = "deviceName"

    static func createTable(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE deviceName (
                    device TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    namedAt REAL NOT NULL
                ) WITHOUT ROWID
                """
        )
    }
}

extension SQLiteWorkoutStore: DeviceNameStore {
    public func deviceNames() async throws -> [DeviceIdentity: String] {
        try await reading { db in
            var names: [DeviceIdentity: String] = [:]
            let rows = try Row.fetchAll(db, sql: "SELECT device, name FROM deviceName")
            for row in rows {
                let device: String = row["device"]
                names[DeviceIdentity(device)] = row["name"]
            }
            return names
        }
    }

    public func setDeviceName(_ name: String?, for device: DeviceIdentity) async throws {
        try await writing { db in
            if let name {
                try db.execute(
                    sql: """
                        INSERT INTO deviceName (device, name, namedAt) VALUES (?, ?, ?)
                        ON CONFLICT (device) DO UPDATE SET name = excluded.name, namedAt = excluded.namedAt
                        """,
                    arguments: [device.rawValue, name, Date().timeIntervalSince1970]
                )
            } else {
                try db.execute(sql: "DELETE FROM deviceName WHERE device = ?", arguments: [device.rawValue])
            }
        }
    }
}
