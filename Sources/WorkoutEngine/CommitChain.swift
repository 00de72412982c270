/// The order in which one session's batches commit, and which of them may: a plain state machine.
///
/// It does no I/O.
///
/// A pipelining device's next batch is stepped (its replies and changes computed by ``SessionMachine``) on the
/// state the batch before it left, while that batch's commit is still syncing: the step overlaps the sync. Each
/// stepped batch then joins the chain with a ticket and commits only once every batch ahead of it has finished,
/// so one device's commits reach the store one at a time and in order.
///
/// A failed commit starts a new generation: every batch stepped before it in the old one is discarded when its
/// turn comes, since its changes build on ones that were never stored (a workout's end whose start failed, a
/// replay of a reply that was not kept). The session restores its state from the store for the next batch.
public struct CommitChain: Sendable {
    /// A batch's place in the chain and the generation of the state it was stepped on.
    public struct Ticket: Sendable, Hashable {
        public let sequence: UInt64
        public let generation: UInt64
    }

    /// Bumped by every failed commit: a ticket of an older generation may not commit.
    public private(set) var generation: UInt64 = 0
    private var issued: UInt64 = 0
    private var finished: UInt64 = 0

    public init() {}

    /// Takes a ticket for a batch stepped on the state of `generation`.
    ///
    /// The generation is read before the step, so a commit that failed while the step waited for the store discards it
    /// too.
    public mutating func join(steppedIn generation: UInt64) -> Ticket {
        defer { issued += 1 }
        return Ticket(sequence: issued, generation: generation)
    }

    /// Whether every batch ahead of `ticket` has finished.
    public func isTurn(_ ticket: Ticket) -> Bool {
        ticket.sequence == finished
    }

    /// Whether `ticket`'s batch may commit: nothing failed since the state it was stepped on.
    public func mayCommit(_ ticket: Ticket) -> Bool {
        ticket.generation == generation
    }

    /// The batch whose turn it is failed to commit: it and every batch stepped on top of it are discarded.
    public mutating func commitFailed() {
        generation &+= 1
    }

    /// The batch whose turn it was is done (committed, failed or discarded): the next one's turn comes.
    public mutating func finish(_ ticket: Ticket) {
        precondition(isTurn(ticket), "batches finish in the order they joined")
        finished += 1
    }

    /// Batches that joined and have not finished.
    public var inFlight: Int { Int(issued - finished) }

    /// Every batch that joined has finished: the store holds all the session's commits that succeeded.
    public var isSettled: Bool { issued == finished }
}
