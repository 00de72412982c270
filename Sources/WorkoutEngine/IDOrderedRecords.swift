import WorkoutProtocol

/// A record the in-memory store keeps by its id.
protocol IdentifiedRecord {
    var id: Int64 { get }
}

extension WorkoutRecord: IdentifiedRecord {}
extension ShareRecord: IdentifiedRecord {}

/// Records in ascending id order, found by binary search: the in-memory store's tables.
///
/// Ids are allocated in increasing order, so a new record is almost always an append, and growing the
/// array moves the records in one copy, where a dictionary re-hashed and moved each of them (a visible share
/// of the device loop's time in a pipelined run).
struct IDOrderedRecords<Record: IdentifiedRecord> {
    private(set) var records: [Record] = []

    subscript(id: Int64) -> Record? {
        index(of: id).map { records[$0] }
    }

    var maximumID: Int64? { records.last?.id }

    /// Adds `record`, or replaces the one with its id.
    mutating func upsert(_ record: Record) {
        let index = insertionIndex(of: record.id)
        if index == records.count {
            // `append`, not `insert(_:at:)`: the generic insert costs several times as much.
            records.append(record)
        } else if records[index].id == record.id {
            records[index] = record
        } else {
            records.insert(record, at: index)
        }
    }

    /// Changes the record with `id` in place; false when there is none.
    @discardableResult
    mutating func update(id: Int64, _ body: (inout Record) -> Void) -> Bool {
        guard let index = index(of: id) else { return false }
        body(&records[index])
        return true
    }

    private func index(of id: Int64) -> Int? {
        let index = insertionIndex(of: id)
        return index < records.count && records[index].id == id ? index : nil
    }

    /// The first index whose record's id is at least `id`.
    private func insertionIndex(of id: Int64) -> Int {
        // New ids are the highest: an append needs no search. The record a device's batch updates (the workout
        // its `end_workout` ends) is nearly always the newest too; a search of a large table costs a cache miss a step.
        if let last = records.last {
            if last.id < id { return records.count }
            if last.id == id { return records.count - 1 }
        }
        var low = 0
        var high = records.count
        while low < high {
            let middle = low + (high - low) / 2
            if records[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
