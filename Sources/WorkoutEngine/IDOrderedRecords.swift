/// A record the in-memory store keeps by its id.
protocol IdentifiedRecord {
    var id: Int64 { get }
}

extension WorkoutRecord: IdentifiedRecord {}
extension ShareRecord: IdentifiedRecord {}

/// Records in ascending id order, found by binary search: the in-memory store's tables.
///
/// Ids are allocated in increasing order, so a new record is almost always an append, and growing the
/// array moves the records in one copy, where a dictionary re-hashed and moved each of them (a tenth of
/// the device loop's time in a pipelined run went to that).
struct IDOrderedRecords<Record: IdentifiedRecord> {
    private(set) var records: [Record] = []

    subscript(id: Int64) -> Record? {
        get {
            let index = insertionIndex(of: id)
            return index < records.count && records[index].id == id ? records[index] : nil
        }
    }

    var maximumID: Int64? { records.last?.id }

    /// Adds `record`, or replaces the one with its id.
    mutating func upsert(_ record: Record) {
        if let last = records.last, last.id >= record.id {
            let index = insertionIndex(of: record.id)
            if index < records.count && records[index].id == record.id {
                records[index] = record
            } else {
                records.insert(record, at: index)
            }
        } else {
            records.append(record)
        }
    }

    /// Changes the record with `id` in place; false when there is none.
    @discardableResult
    mutating func update(id: Int64, _ body: (inout Record) -> Void) -> Bool {
        let index = insertionIndex(of: id)
        guard index < records.count && records[index].id == id else { return false }
        body(&records[index])
        return true
    }

    /// The first index whose record's id is at least `id`.
    private func insertionIndex(of id: Int64) -> Int {
        // The newest records are the ones commits and deliveries touch: try the end first.
        if let last = records.last, last.id < id { return records.count }
        var low = 0
        var high = records.count
        while low < high {
            let middle = low + (high - low) / 2
            if records[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
