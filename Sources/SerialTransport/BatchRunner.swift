import WorkoutProtocol

/// The batch runner of a device's pipeline and its back-pressure, as a plain state machine (no I/O).
///
/// Lines that arrive in one read form one batch (one store transaction). Up to ``maximumBatchesInFlight`` run
/// at a time (two by default: the next batch's session step overlaps the previous batch's commit), and later
/// lines accumulate meanwhile. Replies are written in the order the batches were read, whatever the order they
/// are answered in: a batch answered early is held until every batch before it is written. Reading pauses
/// when too many lines wait or the device is not taking replies, so a device that never reads cannot grow the
/// daemon's memory. While draining, it answers every line the
/// device already sent (also those still in the kernel), then asks for the connection to close.
///
/// ``CommandDispatchHandler`` feeds it what happens on the channel and carries out the ``Actions`` it returns.
/// Every input that may change a decision takes the channel's current writability.
public struct BatchRunner {
    /// Bytes the device sent that the kernel still holds: while draining, those lines are answered too.
    public typealias UnreadInput = @Sendable () -> Int

    /// Lines run as one batch, numbered in the order they were read.
    public struct Batch {
        public let number: Int
        public let lines: [DecodedLine]
    }

    /// A batch with its replies, ready to be written.
    public struct Answered {
        public let number: Int
        public let lines: [DecodedLine]
        public let replies: [Reply]
    }

    public static let defaultMaximumBatchesInFlight = 2

    /// What the handler must do after an input, in this order.
    public struct Actions {
        /// Lines to run now, as one batch; report its replies with ``BatchRunner/batchAnswered(_:replies:)``.
        public var runBatch: Batch?
        /// Reading was held and may go on: ask the channel for the next read.
        public var resumeReading = false
        /// Draining and everything read is answered: close once the replies already written are out.
        public var close = false

        public static var none: Actions { Actions() }
    }

    public private(set) var maximumPendingLines: Int
    /// Batches run but not yet written: one committing while the next steps is what overlaps them.
    public let maximumBatchesInFlight: Int
    private let unreadInput: UnreadInput
    private var pending: [DecodedLine] = []
    /// Run and not yet handed out for writing, oldest first, with their replies once answered.
    private var inFlight: [(batch: Batch, replies: [Reply]?)] = []
    private var nextNumber = 0
    private var readHeld = false
    private var draining = false
    private var closing = false

    public init(
        maximumPendingLines: Int = PipelineOptions.defaultMaximumPendingLines,
        maximumBatchesInFlight: Int = BatchRunner.defaultMaximumBatchesInFlight,
        unreadInput: @escaping UnreadInput = { 0 }
    ) {
        self.maximumPendingLines = maximumPendingLines
        self.maximumBatchesInFlight = max(1, maximumBatchesInFlight)
        self.unreadInput = unreadInput
        inFlight.reserveCapacity(self.maximumBatchesInFlight)
    }

    /// Lines waiting for the batch ahead of them (or for the device to take replies again).
    public var pendingLines: Int { pending.count }

    /// The decoded lines of the current read, in order.
    ///
    /// With nothing waiting, the array becomes the batch as it is.
    public mutating func linesArrived(_ lines: [DecodedLine]) {
        if pending.isEmpty {
            pending = lines
        } else {
            pending.append(contentsOf: lines)
        }
    }

    /// The read that delivered the lines so far is complete: they run as a batch unless one is in flight.
    public mutating func readComplete(isWritable: Bool) -> Actions {
        advance(isWritable: isWritable)
    }

    /// The channel asks whether to read more: `false` holds reading until an action resumes it.
    public mutating func readRequested(isWritable: Bool) -> Bool {
        if mustPauseReading(isWritable: isWritable) {
            readHeld = true
            return false
        }
        return true
    }

    /// The device started or stopped taking replies.
    public mutating func writabilityChanged(isWritable: Bool) -> Actions {
        advance(isWritable: isWritable, mayClose: false)
    }

    /// Graceful shutdown: stop reading once what the device sent is read, answer it all, then close.
    public mutating func drainRequested(isWritable: Bool) -> Actions {
        draining = true
        return advance(isWritable: isWritable)
    }

    /// A reload changed the pending-line limit (it applies at the next read decision).
    public mutating func pendingLimitChanged(_ limit: Int, isWritable: Bool) -> Actions {
        maximumPendingLines = limit
        var actions = Actions.none
        actions.resumeReading = resumeReadingIfPossible(isWritable: isWritable)
        return actions
    }

    /// Batches run and not yet handed out for writing.
    public var batchesInFlight: Int { inFlight.count }

    /// A batch from ``Actions/runBatch`` has been answered.
    ///
    /// Take the batches now ready with ``nextAnswered()``.
    public mutating func batchAnswered(_ number: Int, replies: [Reply]) {
        guard let index = inFlight.firstIndex(where: { $0.batch.number == number }) else { return }
        inFlight[index].replies = replies
    }

    /// The oldest batch in flight if it has been answered: write its replies now. Call it until it returns `nil`,
    /// then ``repliesWritten(isWritable:)``.
    public mutating func nextAnswered() -> Answered? {
        guard let first = inFlight.first, let replies = first.replies else { return nil }
        inFlight.removeFirst()
        return Answered(number: first.batch.number, lines: first.batch.lines, replies: replies)
    }

    /// The replies ``nextAnswered()`` handed out have been written.
    public mutating func repliesWritten(isWritable: Bool) -> Actions {
        advance(isWritable: isWritable)
    }

    private mutating func advance(isWritable: Bool, mayClose: Bool = true) -> Actions {
        var actions = Actions.none
        // No new batch while the device is not taking replies: every committed but unsent reply is one
        // the wearable may retry, and retries are recognised only within the last remembered ids, so
        // how far the daemon runs ahead of the device's reading must stay well inside that window (two batches
        // in flight at most, each bounded by the pending-line limit plus one read).
        if inFlight.count < maximumBatchesInFlight, !pending.isEmpty, isWritable {
            let batch = Batch(number: nextNumber, lines: pending)
            nextNumber &+= 1
            // Not reserved: the next read's lines usually arrive as one array, taken as they are.
            pending = []
            inFlight.append((batch, nil))
            actions.runBatch = batch
        }
        actions.resumeReading = resumeReadingIfPossible(isWritable: isWritable)
        if mayClose, draining, inFlight.isEmpty, pending.isEmpty, !closing, unreadInput() <= 0 {
            closing = true
            actions.close = true
        }
        return actions
    }

    private mutating func resumeReadingIfPossible(isWritable: Bool) -> Bool {
        guard readHeld, !mustPauseReading(isWritable: isWritable) else { return false }
        readHeld = false
        return true
    }

    private func mustPauseReading(isWritable: Bool) -> Bool {
        // Draining stops reading only once the lines the device already sent have all been read.
        (draining && unreadInput() <= 0) || pending.count >= maximumPendingLines || !isWritable
    }
}
