import Foundation

/// What the soak run does, from the environment (`make soak` passes them through).
struct SoakOptions: Sendable {
    /// `SOAK_SECONDS`: how long the devices run.
    var duration: Duration = .seconds(600)
    /// `SOAK_DEVICES`: devices that read their replies (one more never reads).
    var readingDevices = 4
    /// `SOAK_REPLUG_PERCENT`: chance, per batch, that a reading device is unplugged and plugged back.
    var replugPercent = 2
    /// `SOAK_REPORT`: the markdown file whose soak section is replaced with the results.
    var reportPath: String?
    /// `SOAK_CONFIGURATION` (set by `Benchmarks/soak.sh`).
    ///
    /// The build of workoutd under test, for the report.
    var configuration: String?
    /// Seconds between RSS/descriptor samples.
    var sampleInterval: Duration = .seconds(5)
    /// `SOAK=long` (or a run of an hour or more).
    ///
    /// Replication to a real PostgreSQL with outages, configuration reloads, and the per-hour drift of RSS,
    /// descriptors, threads, database and WAL size and reply latency written to its own section of the report.
    var long = false
    /// How often long mode stops PostgreSQL and sends SIGHUP.
    ///
    /// PostgreSQL is stopped for `outageLength` every `outageEvery`, and SIGHUP sent every `reloadEvery`.
    var outageEvery: Duration = .seconds(600)
    var outageLength: Duration = .seconds(60)
    var reloadEvery: Duration = .seconds(300)

    init(environment: [String: String]) throws {
        if let seconds = try Self.integer("SOAK_SECONDS", in: environment, range: 10...86_400) {
            duration = .seconds(seconds)
        }
        if let devices = try Self.integer("SOAK_DEVICES", in: environment, range: 1...64) { readingDevices = devices }
        if let percent = try Self.integer("SOAK_REPLUG_PERCENT", in: environment, range: 0...100) {
            replugPercent = percent
        }
        reportPath = environment["SOAK_REPORT"].flatMap { $0.isEmpty ? nil : $0 }
        configuration = environment["SOAK_CONFIGURATION"].flatMap { $0.isEmpty ? nil : $0 }
        long = environment["SOAK"] == "long" || duration >= .seconds(3600)
        if long {
            // A shorter long run (to try it out) keeps six outages and twelve reloads.
            outageEvery = min(outageEvery, duration / 6)
            outageLength = min(outageLength, outageEvery / 4)
            reloadEvery = min(reloadEvery, duration / 12)
            if duration >= .seconds(3600) { sampleInterval = .seconds(30) }
        }
    }

    private static func integer(_ key: String, in environment: [String: String], range: ClosedRange<Int>) throws -> Int?
    {
        guard let raw = environment[key] else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw SoakFailure("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound); got '\(raw)'")
        }
        return value
    }
}

/// Why the soak run failed, as a sentence.
struct SoakFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
