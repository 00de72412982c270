import Foundation
import WorkoutProtocol

/// The pure part of a device session.
///
/// Given its snapshot and a batch of lines, the replies and the changes to commit. No I/O and no concurrency, so it can
/// be fuzzed and property-tested directly.
public struct SessionMachine: Sendable {
    public let identity: DeviceIdentity
    public private(set) var snapshot: DeviceSnapshot
    /// An earlier step's arrays, empty, for the next step to fill.
    ///
    /// See ``recycle(_:events:)``.
    private var spare = SpareArrays()

    /// Arrays of an answered step, kept empty with their capacity.
    private struct SpareArrays {
        var workouts: [WorkoutRecord] = []
        var shares: [ShareRecord] = []
        var replies: [RecentReply] = []
        var events: [EngineEvent] = []
    }

    /// The most elements of an array kept for the next step: a pipelined batch's arrays are not kept.
    private static let keptCapacity = 64

    /// The outcome of one batch before it is committed.
    public struct Step: Sendable {
        /// One reply per line, in order, as they will be sent if the batch commits.
        public var replies: [Reply]
        public var batch: StoreBatch
        /// What the commands caused (workouts, shares), in order; the batch's own events are the session's.
        public var events: [EngineEvent]

        public var hasChanges: Bool { !batch.isEmpty }
    }

    public init(identity: DeviceIdentity, snapshot: DeviceSnapshot = DeviceSnapshot()) {
        self.identity = identity
        self.snapshot = snapshot
    }

    /// Computes the replies and changes for `lines` and advances the snapshot past them, in place.
    ///
    /// The snapshot is mutated rather than copied because a copy of its remembered replies per batch
    /// dominated single-flight cost. If the step's batch then fails to commit, the caller discards this
    /// machine and restores a new one from the store, which the failed transaction left unchanged.
    ///
    /// The clock is read once per batch, when the first command needs it: a batch's lines arrived together, and
    /// they share its time.
    ///
    /// `admission` carries the device's limits for this batch (see ``BatchAdmission``): a line it does not
    /// admit, a new workout on a full database or a share over the pending limit is answered with its error
    /// and neither runs nor is remembered, so the same `id` retried later runs normally.
    public mutating func run(
        _ lines: [DecodedLine],
        ids: IDAllocator,
        clock: WorkoutClock,
        admission: BatchAdmission = .unlimited
    ) -> Step {
        var batchTime: ClockReading?
        func now() -> ClockReading {
            if let batchTime { return batchTime }
            let time = clock.read()
            batchTime = time
            return time
        }
        var step = Step(
            replies: [],
            batch: StoreBatch(device: identity, state: snapshot.state),
            events: []
        )
        // Empty, so the step starts as a new one would; a lone command's step then fills them without a malloc.
        swap(&step.batch.workouts, &spare.workouts)
        swap(&step.batch.shares, &spare.shares)
        swap(&step.batch.replies, &spare.replies)
        swap(&step.events, &spare.events)
        // Room for the whole batch at once: grown by appends, a pipelined batch's arrays were each copied
        // several times over. A lone line's arrays are made by their one append, and one it leaves empty
        // (a share's workouts, a reply with no id to remember) is never made.
        if lines.count > 1 {
            step.replies.reserveCapacity(lines.count)
            step.events.reserveCapacity(lines.count)
            step.batch.workouts.reserveCapacity(lines.count)
            step.batch.replies.reserveCapacity(lines.count)
        }
        for (index, line) in lines.enumerated() {
            let reply: Reply
            if index >= admission.admitted {
                reply = .error(.rateLimited(retryAfterMilliseconds: admission.retryAfterMilliseconds), id: line.id)
            } else if let id = line.id, var previous = snapshot.recentReplies[id] {
                previous.replayed = true
                reply = previous
            } else {
                switch line.command {
                case .failure(let error):
                    reply = .error(error, id: line.id)
                case .success(let command):
                    reply = execute(command, id: line.id, step: &step, ids: ids, now: now, admission: admission)
                    // A limit's refusal changed nothing: not remembered, so a retry after it runs.
                    if !reply.isLimitRefusal, let id = line.id {
                        // Just looked up and not found (above).
                        snapshot.recentReplies.rememberNew(reply, for: id)
                        step.batch.replies.append(RecentReply(id: id, reply: reply))
                    }
                }
            }
            step.replies.append(reply)
        }
        step.batch.state = snapshot.state
        return step
    }

    /// Takes back the arrays of a step this machine ran.
    ///
    /// Called once the step's batch is committed and its events are copied out. Each is emptied and kept for the
    /// next ``run(_:ids:clock:admission:)``: in place when nothing else holds it, otherwise as a new array of its
    /// capacity. A large one (a pipelined batch's) is let go.
    public mutating func recycle(_ batch: consuming StoreBatch, events: consuming [EngineEvent]) {
        Self.keep(&batch.workouts, as: &spare.workouts)
        Self.keep(&batch.shares, as: &spare.shares)
        Self.keep(&batch.replies, as: &spare.replies)
        Self.keep(&events, as: &spare.events)
    }

    private static func keep<Element>(_ array: inout [Element], as spare: inout [Element]) {
        guard array.capacity > spare.capacity, array.capacity <= keptCapacity else { return }
        array.removeAll(keepingCapacity: true)
        swap(&array, &spare)
    }

    /// ``run(_:ids:clock:admission:)`` on a wall clock alone (trusted, no boot time).
    public mutating func run(
        _ lines: [DecodedLine],
        ids: IDAllocator,
        now: @escaping @Sendable () -> Date,
        admission: BatchAdmission = .unlimited
    ) -> Step {
        run(lines, ids: ids, clock: .wall(now), admission: admission)
    }

    /// The count of undelivered shares as the store has it now.
    ///
    /// Deliveries only ever lower it; the machine raises it for each share it queues.
    public mutating func pendingSharesCounted(_ count: Int) {
        snapshot.pendingShares = count
    }

    private mutating func execute(
        _ command: Command,
        id: CommandID?,
        step: inout Step,
        ids: IDAllocator,
        now: () -> ClockReading,
        admission: BatchAdmission
    ) -> Reply {
        switch command {
        case .startWorkout(let workout):
            // Matched, not compared through `activeWorkout`, which copies the record.
            if case .active = snapshot.state {
                return .error(.workoutAlreadyActive, id: id)
            }
            if admission.refusesNewWorkouts {
                return .error(.storageFull, id: id)
            }
            let reading = now()
            var record = WorkoutRecord(
                id: ids.nextWorkoutID(),
                device: identity,
                workout: workout,
                startedAt: reading.wall,
                startCommandID: id
            )
            record.startedBoot = reading.boot
            record.clockMark = reading.synchronized ? nil : .unsynchronized
            snapshot.state = .active(record)
            step.batch.workouts.append(record)
            step.events.append(.workoutStarted(record))
            return .ok(.workoutStarted(workoutID: record.id), id: id)

        case .endWorkout:
            guard case .active(var record) = snapshot.state else {
                return .error(.noActiveWorkout, id: id)
            }
            record.end(at: now())
            record.endCommandID = id
            snapshot.state = .idle
            snapshot.lastEndedWorkoutID = record.id
            step.batch.workouts.append(record)
            step.events.append(.workoutEnded(record))
            return .ok(.workoutEnded(workoutID: record.id, durationSeconds: record.durationSeconds ?? 0), id: id)

        case .shareWorkout(let service):
            guard let workoutID = snapshot.lastEndedWorkoutID else {
                return .error(.nothingToShare, id: id)
            }
            let limit = admission.pendingShareLimit
            if limit > 0, snapshot.pendingShares >= limit {
                return .error(.tooManyPendingShares(limit: limit), id: id)
            }
            snapshot.pendingShares += 1
            let share = ShareRecord(
                id: ids.nextShareID(),
                workoutID: workoutID,
                device: identity,
                service: service,
                queuedAt: now().wall,
                commandID: id
            )
            step.batch.shares.append(share)
            step.events.append(.shareQueued(share))
            return .ok(.workoutShared(workoutID: workoutID, service: service, shareID: share.id), id: id)
        }
    }
}

extension SessionMachine.Step {
    /// Whether the reply to `line` depends on the batch being committed.
    ///
    /// A command that ran and changed something does; a replay, a line that did not decode and a limit's refusal
    /// (the rate limit among them) do not. Read from the reply rather than kept per line: a lone command's
    /// batch then needs no array for it.
    static func needsCommit(_ reply: Reply, answering line: DecodedLine) -> Bool {
        guard case .success = line.command else { return false }
        return !reply.replayed && !reply.isLimitRefusal
    }
}

extension Reply {
    /// A refusal by one of the device's limits (full storage, too many pending shares): nothing changed.
    var isLimitRefusal: Bool {
        switch errorCode {
        case .storageFull?, .tooManyPendingShares?, .rateLimited?: true
        default: false
        }
    }
}
