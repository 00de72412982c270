import ControlPlane
import ControlProtocol
import WorkoutEngine

/// `/api/workouts.csv` a page of workouts at a time.
///
/// The header and the first page, then each following page as the client takes the one before, so an export of any size
/// holds one page in memory.
actor CSVPages {
    private let responder: ControlResponder
    private var query: WorkoutQuery
    private let device: String?
    /// Workouts still to write; nil: all there are.
    private var remaining: Int?
    private let pageSize: Int
    private let writer = WorkoutCSV()
    private var first: [UInt8]?
    private var finished = false

    init(responder: ControlResponder, query: WorkoutQuery, device: String?, limit: Int?, pageSize: Int) {
        self.responder = responder
        self.query = query
        self.device = device
        remaining = limit
        self.pageSize = max(1, pageSize)
    }

    /// Reads the first page, with the header row before it.
    func readFirst() async throws(ControlError) {
        first = Array(writer.headerLine().utf8) + (try await page() ?? [])
    }

    /// The next chunk of the document; nil after the last.
    func next() async throws -> [UInt8]? {
        if let chunk = first {
            first = nil
            return chunk
        }
        return try await page()
    }

    private func page() async throws(ControlError) -> [UInt8]? {
        guard !finished else { return nil }
        let size = min(pageSize, remaining ?? pageSize)
        guard size > 0 else {
            finished = true
            return nil
        }
        query.limit = size
        let workouts = try await responder.workouts(query, matching: device)
        if let remaining { self.remaining = remaining - workouts.count }
        if workouts.count < size { finished = true }
        query.beforeID = workouts.last?.id
        return workouts.isEmpty ? nil : Array(writer.rows(workouts).utf8)
    }
}
