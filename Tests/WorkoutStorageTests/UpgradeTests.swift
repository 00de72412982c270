import Foundation
import GRDB
import Testing
import WorkoutEngine
import WorkoutProtocol
import WorkoutdTesting

@testable import WorkoutStorage

#if canImport(Glibc)
import Glibc
#endif

/// Upgrades and downgrades of the database.
///
/// A migration is one transaction, so a kill at any point leaves the old or the new schema intact; a
/// database a newer version wrote is refused, untouched.
@Suite(.serialized, .enabled(if: TestLane.runsLiveDaemons, "starts workoutd processes")) struct UpgradeTests {
    static let workouts = 100_000
    static let firstMigration = "v1: workouts, shares, sessions, remembered replies"
    /// How many migrations a database has once the reply ring replaced `replyLog`.
    static let replyRingMigrations =
        (StoreSchema.migrator.migrations.firstIndex(of: StoreSchema.replyRingMigrationName) ?? 0) + 1

    /// A configuration file of its own, so nothing on this machine changes what is tested.
    static func configFile(in directory: TemporaryDirectory) throws -> String {
        let file = directory.path + "/workoutd.yaml"
        try "discovery:\n  enabled: false\n".write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    static func startDaemon(_ state: String, config: String, readiness: Bool = false) throws -> DaemonProcess {
        try DaemonProcess(
            arguments: ["--config", config, "--state-dir", state, "--control-socket", "none"],
            readiness: readiness
        )
    }

    /// The schema objects (tables, indexes) after the migrations up to `identifier`, or all of them.
    static func schema(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db,
            sql:
                "SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    }

    static func referenceSchemas() throws -> [[String]: [String]] {
        var schemas: [[String]: [String]] = [:]
        let identifiers = StoreSchema.migrator.migrations
        for count in 1...identifiers.count {
            let queue = try DatabaseQueue()
            try StoreSchema.migrator.migrate(queue, upTo: identifiers[count - 1])
            schemas[Array(identifiers.prefix(count))] = try queue.read { db in try schema(db) }
        }
        return schemas
    }

    /// A database at the first schema holding `workouts` ended workouts and a device session.
    ///
    /// Each workout has one remembered reply (which the second migration rewrites: the slow one); filled in a few
    /// statements.
    static func makeFirstSchemaDatabase(in stateDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let path = stateDirectory + "/" + SQLiteWorkoutStore.fileName
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA page_size = 1024") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try StoreSchema.migrator.migrate(pool, upTo: firstMigration)
        try pool.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(workouts))
                    INSERT INTO workout (id, device, location, date, intensityLevel, startedAt, endedAt, startCommandID, endCommandID)
                    SELECT i, 'band-' || (i % 10), 'Gym ' || i, 1584387913, 1 + i % 10, 1700000000 + i * 60, 1700000030 + i * 60, i * 2, i * 2 + 1 FROM n
                    """
            )
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(workouts))
                    INSERT INTO rememberedReply (device, commandID, reply)
                    SELECT 'band-' || (i % 10), i * 2 + 1, '{"status":"ok","command_type":"end_workout","workout_id":' || i || '}' FROM n
                    """
            )
            try db.execute(
                sql: """
                    INSERT INTO deviceSession (device, state, activeWorkoutID, lastEndedWorkoutID)
                    SELECT 'band-' || (id % 10), '{"idle":true}', NULL, MAX(id) FROM workout GROUP BY id % 10
                    """
            )
        }
        try pool.close()
    }

    @Test func aKillDuringTheMigrationOfAHundredThousandWorkoutsLeavesTheOldOrTheNewSchema() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = directory.path + "/state"
        let config = try Self.configFile(in: directory)
        try Self.makeFirstSchemaDatabase(in: state)
        let references = try Self.referenceSchemas()
        let path = state + "/" + SQLiteWorkoutStore.fileName

        // The kill lands wherever it lands: each round checks what the file holds, not when it was killed. The
        // delays grow until a round finds every migration applied, so the kills sweep the whole migration.
        var seen: [Int] = []
        var delay: useconds_t = 0
        while seen.last != StoreSchema.migrator.migrations.count, seen.count < 40 {
            let daemon = try Self.startDaemon(state, config: config)
            usleep(delay)
            delay = delay * 3 / 2 + 20_000
            daemon.signal(SIGKILL)
            _ = try daemon.waitForExit()
            let queue = try DatabaseQueue(path: path)
            let applied = try await queue.read { db in
                let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
                #expect(
                    Array(StoreSchema.migrator.migrations.prefix(applied.count)) == applied,
                    "applied in order: \(applied)"
                )
                #expect(try Self.schema(db) == references[applied], "the schema of exactly \(applied.count) migrations")
                #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workout") == Self.workouts)
                #expect(try String.fetchAll(db, sql: "PRAGMA quick_check") == ["ok"])
                if applied.count >= Self.replyRingMigrations {
                    // Ten devices of 10,000 replies each: every device's newest window (1,024) in its ring.
                    #expect(
                        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM reply WHERE commandID IS NOT NULL") == 10
                            * 1024,
                        "each device's newest replies moved"
                    )
                } else if applied.count >= 2 {
                    #expect(
                        try Int.fetchOne(db, sql: "SELECT SUM(count) FROM replyLog") == Self.workouts,
                        "every remembered reply moved"
                    )
                } else {
                    #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rememberedReply") == Self.workouts)
                }
                return applied.count
            }
            seen.append(applied)
            try queue.close()
        }
        // Then a start that is left to finish: everything migrated, nothing lost.
        let daemon = try Self.startDaemon(state, config: config, readiness: true)
        try daemon.waitUntilReady(timeout: .seconds(120))
        daemon.stop()
        let store = try SQLiteWorkoutStore(stateDirectory: state, mode: .readOnly)
        #expect(try await store.workouts(device: nil, limit: nil).count == Self.workouts)
        let lastEnded = try await store.database.read { db in
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT lastEndedWorkoutID FROM (\(ReplyRing.sessionsSQL)) JOIN device USING (number) WHERE name = 'band-0'
                    """
            )
        }
        #expect(lastEnded == Int64(Self.workouts), "the sessions moved into the rings")
        #expect(
            try await store.database.read { db in try WriterVersion.read(db) } != nil,
            "the version that wrote it is recorded"
        )
        print("UpgradeTests: migrations applied when killed: \(seen)")
    }

    @Test func aDatabaseANewerVersionWroteIsRefusedWithExit73AndLeftUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = directory.path + "/state"
        let config = try Self.configFile(in: directory)
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: state, softwareVersion: "0.0.1")
            try store.database.write { db in try db.execute(sql: "UPDATE workoutdVersion SET version = '99.1.0'") }
            try store.close()
        }
        let path = state + "/" + SQLiteWorkoutStore.fileName
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: state).sorted()

        let daemon = try Self.startDaemon(state, config: config)
        #expect(try daemon.waitForExit() == 73)
        #expect(
            daemon.log.contains("the database was written by workoutd 99.1.0, newer than this version"),
            "\(daemon.log)"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "not altered")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: state).sorted().filter { $0 != "workoutd.lock" }
                == files.filter { $0 != "workoutd.lock" }
        )
    }

    @Test func unknownMigrationsAreRefusedEvenWithoutARecordedVersion() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try SQLiteWorkoutStore(stateDirectory: directory.path)
            try store.database.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
            }
            try store.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: directory.databasePath))
        let error = try #require(throws: StorageOpenError.self) {
            try SQLiteWorkoutStore(stateDirectory: directory.path, softwareVersion: "0.1.0")
        }
        #expect(error.kind == .newerSchema)
        #expect(
            error.detail.contains("written by a newer workoutd, newer than this version (this is 0.1.0)"),
            "\(error)"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.databasePath)) == before)
    }

    @Test func versionsCompareByTheirNumbers() {
        #expect(WriterVersion.isNewer("0.10.0", than: "0.9.1"))
        #expect(WriterVersion.isNewer("1.0", than: "0.9.9-dev"))
        #expect(!WriterVersion.isNewer("0.1.0", than: "0.1.0"))
        #expect(!WriterVersion.isNewer("0.1.0+git", than: "0.1"))
        #expect(!WriterVersion.isNewer("garbage", than: "0.1.0"))
    }
}
