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
    /// `SOAK_CONFIGURATION` (set by `scripts/soak.sh`): the build of workoutd under test, for the report.
    var configuration: String?
    /// Seconds between RSS/descriptor samples.
    var sampleInterval: Duration = .seconds(5)

    init(environment: [String: String]) throws {
        if let seconds = try Self.integer("SOAK_SECONDS", in: environment, range: 10...86_400) { duration = .seconds(seconds) }
        if let devices = try Self.integer("SOAK_DEVICES", in: environment, range: 1...64) { readingDevices = devices }
        if let percent = try Self.integer("SOAK_REPLUG_PERCENT", in: environment, range: 0...100) { replugPercent = percent }
        reportPath = environment["SOAK_REPORT"].flatMap { $0.isEmpty ? nil : $0 }
        configuration = environment["SOAK_CONFIGURATION"].flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func integer(_ key: String, in environment: [String: String], range: ClosedRange<Int>) throws -> Int? {
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
