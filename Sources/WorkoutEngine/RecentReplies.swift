import WorkoutProtocol

/// The last replies sent to a device for commands that carried an `id`, oldest evicted first.
///
/// A wearable that got no reply resends with the same `id`; finding it here means "already done".
public struct RecentReplies: Sendable, Hashable {
    public static let defaultCapacity = 1024

    public let capacity: Int
    private var replies: [CommandID: Reply] = [:]
    private var order: [CommandID] = []
    private var head = 0

    public init(capacity: Int = RecentReplies.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// Oldest first, as stored.
    public init(_ entries: [(CommandID, Reply)], capacity: Int = RecentReplies.defaultCapacity) {
        self.init(capacity: capacity)
        for (id, reply) in entries { remember(reply, for: id) }
    }

    public subscript(id: CommandID) -> Reply? { replies[id] }

    public var count: Int { replies.count }

    /// Oldest first.
    public var entries: [(CommandID, Reply)] {
        order[head...].compactMap { id in replies[id].map { (id, $0) } }
    }

    public mutating func remember(_ reply: Reply, for id: CommandID) {
        if replies.updateValue(reply, forKey: id) == nil {
            order.append(id)
        }
        while replies.count > capacity, head < order.count {
            replies[order[head]] = nil
            head += 1
        }
        // Compact now and then so `order` does not grow without bound.
        if head > capacity {
            order.removeFirst(head)
            head = 0
        }
    }
}
