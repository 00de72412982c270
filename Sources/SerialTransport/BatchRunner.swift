import WorkoutProtocol

/// The batch runner of a device's pipeline and its back-pressure, as a plain state machine (no I/O).
///
/// Lines that arrive in one read form one batch (one store transaction); one batch runs at a time and the
/// next accumulates meanwhile. Reading pauses when too many lines wait or the device is not taking replies,
/// so a device that never reads cannot grow the daemon's memory. While draining, it answers every line the
/// device already sent (also those still in the kernel), then asks for the connection to close.
///
/// ``CommandDispatchHandler`` feeds it what happens on the channel and carries out the ``Actions`` it returns.
/// Every input that may change a decision takes the channel's current writability.
public struct BatchRunner {
    /// Bytes the device sent that the kernel still holds: while draining, those lines are answered too.
    public typealias UnreadInput = @Sendable () -> Int

    /// What the handler must do after an input, in this order.
    public struct Actions {
        /// Lines to run now, as one batch; report its end with ``BatchRunner/batchFinished(isWritable:)``.
        public var runBatch: [DecodedLine]?
        /// Reading was held and may go on: ask the channel for the next read.
        public var resumeReading = false
        /// Draining and everything read is answered: close once the replies already written are out.
        public var close = false

        public static var none: Actions { Actions() }
    }

    public private(set) var maximumPendingLines: Int
    private let unreadInput: UnreadInput
    private var pending: [DecodedLine] = []
    private var inFlight = false
    private var readHeld = false
    private var draining = false
    private var closing = false

    public init(maximumPendingLines: Int = PipelineOptions.defaultMaximumPendingLines, unreadInput: @escaping UnreadInput = { 0 }) {
        self.maximumPendingLines = maximumPendingLines
        self.unreadInput = unreadInput
    }

    /// Lines waiting for the batch ahead of them (or for the device to take replies again).
    public var pendingLines: Int { pending.count }

    /// The decoded lines of the current read, in order (nothing waiting: the array becomes the batch as it is).
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

    /// The batch from the last ``Actions/runBatch`` has been answered and its replies written.
    public mutating func batchFinished(isWritable: Bool) -> Actions {
        inFlight = false
        return advance(isWritable: isWritable)
    }

    private mutating func advance(isWritable: Bool, mayClose: Bool = true) -> Actions {
        var actions = Actions.none
        // No new batch while the device is not taking replies: every committed but unsent reply is one
        // the wearable may retry, and retries are recognised only within the last remembered ids, so
        // how far the daemon runs ahead of the device's reading must stay well inside that window.
        if !inFlight, !pending.isEmpty, isWritable {
            actions.runBatch = pending
            // Not reserved: the next read's lines usually arrive as one array, taken as they are.
            pending = []
            inFlight = true
        }
        actions.resumeReading = resumeReadingIfPossible(isWritable: isWritable)
        if mayClose, draining, !inFlight, pending.isEmpty, !closing, unreadInput() <= 0 {
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
