import WorkoutProtocol

/// The last replies sent to a device for commands that carried an `id`, oldest evicted first.
///
/// A wearable that got no reply resends with the same `id`; finding it here means "already done".
public struct RecentReplies: Sendable, Hashable {
    public static let defaultCapacity = 1024

    public let capacity: Int
    /// The window, oldest at `oldest`, as a ring once full; a reply is stored once, here.
    private var ring: [(id: CommandID, reply: Reply)] = []
    private var oldest = 0
    /// Where each id's reply is in `ring`, or was.
    ///
    /// An evicted id's entry stays until the next compaction and is recognised as stale because its slot now holds
    /// another id. Removing it at eviction cost a large part of remembering (a dictionary deletion re-hashes the keys
    /// after it), once per command in a full window.
    private var positions: [CommandID: Int] = [:]

    public init(capacity: Int = RecentReplies.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// Oldest first, as stored.
    public init(_ entries: [(CommandID, Reply)], capacity: Int = RecentReplies.defaultCapacity) {
        self.init(capacity: capacity)
        for (id, reply) in entries { remember(reply, for: id) }
    }

    public subscript(id: CommandID) -> Reply? {
        position(of: id).map { ring[$0].reply }
    }

    private func position(of id: CommandID) -> Int? {
        guard let position = positions[id], ring[position].id == id else { return nil }
        return position
    }

    public var count: Int { ring.count }

    /// Oldest first.
    public var entries: [(CommandID, Reply)] {
        (ring[oldest...] + ring[..<oldest]).map { ($0.id, $0.reply) }
    }

    public mutating func remember(_ reply: Reply, for id: CommandID) {
        if let position = position(of: id) {
            ring[position].reply = reply
        } else {
            rememberNew(reply, for: id)
        }
    }

    /// ``remember(_:for:)`` for an id the caller has just looked up and not found: saves hashing it again.
    mutating func rememberNew(_ reply: Reply, for id: CommandID) {
        if ring.count < capacity {
            positions[id] = ring.count
            ring.append((id, reply))
        } else {
            positions[id] = oldest
            ring[oldest] = (id, reply)
            oldest = (oldest + 1) % capacity
            if positions.count >= Self.compactionFactor * capacity { compactPositions() }
        }
    }

    /// Stale positions allowed, as a multiple of the window, before they are dropped in one pass.
    ///
    /// A compaction re-inserts the window's ids, so its cost per remembered reply is a fraction of one insert.
    private static let compactionFactor = 4

    private mutating func compactPositions() {
        positions.removeAll(keepingCapacity: true)
        for (position, entry) in ring.enumerated() { positions[entry.id] = position }
    }

    public static func == (lhs: RecentReplies, rhs: RecentReplies) -> Bool {
        lhs.capacity == rhs.capacity && lhs.entries.elementsEqual(rhs.entries) { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(capacity)
        for (id, reply) in entries {
            hasher.combine(id)
            hasher.combine(reply)
        }
    }
}
