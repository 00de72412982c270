import Foundation

/// A benchmark part's floors, read from `Benchmarks/Thresholds/PART.json`.
///
/// The drivers hold their figures to these floors and record the figures for `make bench-check`, which holds them to
/// the same files (`Benchmarks/bench_floors.py` describes the format).
public struct Thresholds: Sendable {
    /// One bound on one metric: at most `max`, at least `min`, below `below`.
    public struct Floor: Sendable, Decodable {
        public var metric: String
        public var max: Double?
        public var min: Double?
        public var below: Double?
        public var description: String?
        public var origin: String?

        /// Whether `value` meets every bound this floor sets.
        public func isMet(by value: Double) -> Bool {
            (max.map { value <= $0 } ?? true) && (min.map { value >= $0 } ?? true)
                && (below.map { value < $0 } ?? true)
        }

        /// The bound as a table shows it, such as `≥ 0.5` or `< 1`.
        public var requirement: String {
            var bounds: [String] = []
            if let min { bounds.append("≥ \(Self.format(min))") }
            if let max { bounds.append("≤ \(Self.format(max))") }
            if let below { bounds.append("< \(Self.format(below))") }
            return bounds.joined(separator: " and ")
        }

        private static func format(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
    }

    /// A floor, or a choice of floors of which one must be met.
    private struct Entry: Decodable {
        var metric: String?
        var max: Double?
        var min: Double?
        var below: Double?
        var description: String?
        var origin: String?
        var anyOf: [Entry]?

        enum CodingKeys: String, CodingKey {
            case metric, max, min, below, description, origin
            case anyOf = "any_of"
        }
    }

    private struct Document: Decodable {
        var floors: [Entry]
    }

    /// The part these floors belong to.
    public let part: String
    /// Every single floor of the part; a choice of floors is left to `make bench-check`.
    public let floors: [Floor]

    /// Reads `PART.json` from `$BENCH_THRESHOLDS`, else from `Benchmarks/Thresholds` beside these sources.
    public static func load(part: String, filePath: String = #filePath) throws -> Thresholds {
        let directory =
            ProcessInfo.processInfo.environment["BENCH_THRESHOLDS"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Thresholds")
        let url = directory.appendingPathComponent("\(part).json")
        let document = try JSONDecoder().decode(Document.self, from: Data(contentsOf: url))
        let floors = document.floors.compactMap { entry -> Floor? in
            guard entry.anyOf == nil, let metric = entry.metric else { return nil }
            return Floor(
                metric: metric,
                max: entry.max,
                min: entry.min,
                below: entry.below,
                description: entry.description,
                origin: entry.origin
            )
        }
        return Thresholds(part: part, floors: floors)
    }

    /// The floors set on `metric`, in the file's order.
    public func floors(on metric: String) -> [Floor] {
        floors.filter { $0.metric == metric }
    }

    /// Writes `metrics` as a JSON object to `$BENCH_METRICS_FILE`, when it is set, for the part to record.
    public static func writeMetrics(_ metrics: [String: Double]) throws {
        guard let path = ProcessInfo.processInfo.environment["BENCH_METRICS_FILE"], !path.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(metrics).write(to: URL(fileURLWithPath: path))
    }
}
