import Foundation
import Synchronization
import WorkoutProtocol

/// One device's session: runs its commands in order and commits each batch before replying.
///
/// A batch is what one read from the device delivered. Its commands share one store transaction
/// (group commit), and its replies are released only after that transaction commits, so an `ok`
/// always describes something already durable.
public actor DeviceSession {
    public nonisolated let identity: DeviceIdentity
    private let store: any SessionStore
    /// The same store when it commits in place, which lets ``answerImmediately(_:from:)`` run batches.
    nonisolated let immediateStore: (any ImmediatelyCommittingStore)?
    private let ids: IDAllocator
    private let clock: WorkoutClock
    private let events: EngineEvents
    /// `limits.*` in force (a reload changes them for every session at once).
    private let limits: LiveDeviceLimits
    /// The device's command budget.
    ///
    /// Kept by the session, not the connection, so reconnecting does not refill it.
    private var bucket = TokenBucket()
    /// When the session last ran a batch (or was made).
    ///
    /// What ``WorkoutEngine/evictIdleSessions(idleFor:now:)`` reads.
    nonisolated let lastActive: Mutex<ContinuousClock.Instant>
    private var machine: SessionMachine?
    /// Batches are stepped one at a time even across suspension points.
    ///
    /// A replugged device's old and new connections may both submit, and actor isolation alone would let them
    /// interleave at `await`. The lock is held while a batch steps, not while it commits: the next batch steps while
    /// this one's commit syncs.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// The order in which stepped batches commit, and whether each may (see ``CommitChain``).
    private var commits = CommitChain()
    /// Runs the stepped batches' commits in that order, each as soon as the one before it succeeded.
    ///
    /// That holds on a store that queues commits; on any other a batch commits when its turn comes.
    private nonisolated let pipeline: CommitPipeline?
    /// Stepped batches waiting for the batches ahead of them to finish, with their tickets.
    private var turnWaiters: [(ticket: CommitChain.Ticket, continuation: CheckedContinuation<Void, Never>)] = []
    /// A batch near the pending-share limit waits here until every commit ahead of it has finished.
    private var settledWaiter: CheckedContinuation<Void, Never>?
    /// Why the last commit failed: what the batches stepped on top of it are discarded for.
    private var lastCommitFailure = ""
    /// The events of the batches answered at once, held until ``announceAnswered()`` or the next entry.
    ///
    /// These are the batches ``answerImmediately(_:from:)`` or ``handle(_:from:holdingEvents:)`` answered (received,
    /// what each caused, answered); the next entry is the session's.
    private var unannounced: [EngineEvent]?
    /// The array the last events were announced in, emptied, for the next batch answered at once.
    ///
    /// The observers have usually let go of it by then, so a lone command's events cost no new array.
    private var spareEvents: [EngineEvent] = []
    /// The most events whose array is kept: a pipelined batch's is not.
    private static let keptEventCapacity = 64
    /// The executor the session was placed on, if any (see ``WorkoutEngine/SessionExecutor``).
    private nonisolated let executor: (any SerialExecutor)?
    /// Where the session runs when it was placed on none: the default executor of an empty actor.
    private nonisolated let defaultExecutorOwner = DefaultExecutorOwner()

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? defaultExecutorOwner.unownedExecutor
    }

    init(
        identity: DeviceIdentity,
        store: any SessionStore,
        ids: IDAllocator,
        clock: WorkoutClock,
        events: EngineEvents,
        limits: LiveDeviceLimits = LiveDeviceLimits(.unlimited),
        executor: (any SerialExecutor)? = nil
    ) {
        self.limits = limits
        self.lastActive = Mutex(.now)
        self.identity = identity
        self.store = store
        self.immediateStore = store as? any ImmediatelyCommittingStore
        self.ids = ids
        self.clock = clock
        self.events = events
        self.executor = executor
        self.pipeline = (store as? any QueueingCommitStore).map { CommitPipeline(store: $0) }
    }

    /// The current state, restoring it from the store on first use.
    public func state() async throws -> SessionState {
        try await restored().snapshot.state
    }

    /// Batches stepped whose commit has not finished: committing, or waiting for the batch ahead of them.
    public var batchesAwaitingCommit: Int { commits.inFlight }

    /// Runs a batch of decoded lines and returns one reply per line, in order, once its commit is durable.
    ///
    /// The batch is stepped on the state the batch before it left, which may still be committing, and commits
    /// after it (see ``CommitChain``). If a batch ahead of it failed to commit, its replies are
    /// `storage_unavailable`, as are the failed batch's: nothing either changed is stored or kept.
    ///
    /// Its events (``EngineEvent/batchReceived(_:)``, what the commands caused, ``EngineEvent/batchAnswered(_:)``)
    /// are emitted here, once the batch's turn to commit has come, so batches of one device never interleave in them.
    /// With `holdingEvents` they are held instead, as ``answerImmediately(_:from:)`` holds its batch's, until the
    /// caller has written the replies and calls ``announceAnswered()``: observers run after the reply, not before.
    public func handle(
        _ lines: [DecodedLine],
        from origin: CommandOrigin = .device,
        holdingEvents: Bool = false
    ) async -> [Reply] {
        guard !lines.isEmpty else { return [] }
        await acquire()
        announceAnswered()
        let started = ContinuousClock.now
        lastActive.withLock { $0 = started }
        let stepped = await step(lines, from: origin, at: started)
        // Handed over under the lock, so in step order: it commits once every batch stepped before it has.
        let pending = stepped.step.flatMap {
            $0.hasChanges ? pipeline?.submit($0.batch, steppedIn: stepped.ticket.generation) : nil
        }
        // The next batch may step now, on the state this one left, while this one waits for its commit.
        release()
        await turn(stepped.ticket)
        let received = EngineEvent.batchReceived(ReceivedBatch(device: identity, origin: origin, lines: lines))
        if !holdingEvents { events.emit(received) }
        var (replies, caused) = await commit(stepped, pending, lines: lines)
        caused.append(answered(lines, replies, from: origin, started: started))
        if holdingEvents {
            // Batches finish in read order (the commit chain), so held events stay in that order.
            unannounced = (unannounced ?? []) + [received] + caused
        } else {
            events.emit(contentsOf: caused)
        }
        finish(stepped.ticket)
        return replies
    }

    private func answered(
        _ lines: [DecodedLine],
        _ replies: [Reply],
        from origin: CommandOrigin,
        started: ContinuousClock.Instant
    ) -> EngineEvent {
        .batchAnswered(
            AnsweredBatch(
                device: identity,
                origin: origin,
                lines: lines,
                replies: replies,
                started: started,
                answered: .now
            )
        )
    }

    private func acquire() async {
        if !busy {
            busy = true
            return
        }
        // Checked again where the continuation is registered. On a session placed on an event loop the call to
        // `withCheckedContinuation` was seen to suspend before its body ran (FloodEndToEndTests stalled with two
        // batches in flight): a holder that released meanwhile would never have resumed this one.
        await withCheckedContinuation { continuation in
            if busy {
                waiting.append(continuation)
            } else {
                busy = true
                continuation.resume()
            }
        }
    }

    private func release() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Returns once every batch that joined the chain before `ticket` has finished.
    private func turn(_ ticket: CommitChain.Ticket) async {
        guard !commits.isTurn(ticket) else { return }
        // Checked again where the continuation is registered (see acquire()).
        await withCheckedContinuation { continuation in
            if commits.isTurn(ticket) {
                continuation.resume()
            } else {
                turnWaiters.append((ticket, continuation))
            }
        }
    }

    /// Ends `ticket`'s turn and starts the next batch's.
    private func finish(_ ticket: CommitChain.Ticket) {
        commits.finish(ticket)
        if let next = turnWaiters.firstIndex(where: { commits.isTurn($0.ticket) }) {
            turnWaiters.remove(at: next).continuation.resume()
        }
        if commits.isSettled, let settledWaiter {
            self.settledWaiter = nil
            settledWaiter.resume()
        }
    }

    /// Returns once every batch that joined the chain has finished.
    ///
    /// Called only while stepping, under the lock.
    private func settled() async {
        guard !commits.isSettled else { return }
        await withCheckedContinuation { continuation in
            if commits.isSettled {
                continuation.resume()
            } else {
                settledWaiter = continuation
            }
        }
    }

    /// Runs a batch at once when nothing in it has to wait.
    ///
    /// The session is already restored, no other batch is running and the store commits in place
    /// (``ImmediatelyCommittingStore``); for a store whose commit waits for the disk, also no other write underway and
    /// no input waiting (`inputWaiting`, asked only then), so only a device in single flight holds its loop for its
    /// sync. Returns `nil` otherwise, and the caller uses ``handle(_:)``. Same replies, same order, same commit rule.
    ///
    /// Its events are the same as ``handle(_:from:)``'s, in the same order, but held until
    /// ``announceAnswered()``: the caller writes the replies first, so a lone command's reply does not wait
    /// for the observers (counters, the latency histogram, the event stream, the share worker's doorbell).
    /// Any other entry into the session announces them first, so batches never interleave in the events.
    /// Nothing is emitted or held when it returns `nil`.
    public func answerImmediately(
        _ lines: [DecodedLine],
        from origin: CommandOrigin = .device,
        inputWaiting: @autoclosure () -> Bool = false
    ) -> [Reply]? {
        guard !busy, commits.isSettled, let immediateStore, var machine = self.machine else { return nil }
        if immediateStore.immediateCommitWaitsForDisk, !immediateStore.writerIsIdle || inputWaiting() { return nil }
        guard !lines.isEmpty else { return [] }
        // Near the pending-share limit the store's count is read again, which waits: not here.
        guard !mayReachShareLimit(machine, lines: lines.count) else { return nil }
        announceAnswered()
        let started = ContinuousClock.now
        lastActive.withLock { $0 = started }
        self.machine = nil
        let step = machine.run(
            lines,
            ids: ids,
            clock: clock,
            admission: admission(lines.count, from: origin, at: started)
        )
        var failure: (any Error)?
        if step.hasChanges {
            do { try immediateStore.commitImmediately(step.batch) } catch { failure = error }
        }
        // The step's arrays, for the machine to fill again once they are done with (see SessionMachine.recycle).
        let committed = step.batch
        let (replies, caused) = conclude(step, advanced: machine, lines: lines, failure: failure)
        // All of the batch's events in one emission, in one array made once: each observer is called once per batch.
        var batchEvents: [EngineEvent] = []
        swap(&batchEvents, &spareEvents)
        batchEvents.reserveCapacity(caused.count + 2)
        batchEvents.append(.batchReceived(ReceivedBatch(device: identity, origin: origin, lines: lines)))
        batchEvents.append(contentsOf: caused)
        batchEvents.append(answered(lines, replies, from: origin, started: started))
        unannounced = batchEvents
        // Kept by the machine that ran them, unless the commit failed and the machine with it.
        self.machine?.recycle(consume committed, events: consume caused)
        return replies
    }

    /// Emits the held events of the batches answered (see ``unannounced``), if any.
    public func announceAnswered() {
        guard var held = unannounced else { return }
        unannounced = nil
        events.emit(contentsOf: held)
        guard held.capacity <= Self.keptEventCapacity else { return }
        // Emptied now, so the events' lines and records are not held until the next batch (the transport fills the
        // array of a read's lines again only once nothing else holds it); in place when no observer kept the array.
        held.removeAll(keepingCapacity: true)
        spareEvents = held
    }

    /// A batch stepped and holding its place in the commit chain.
    private struct Stepped {
        var ticket: CommitChain.Ticket
        /// `nil` when the session could not be restored: nothing ran, and `unrestorable` says why.
        var step: SessionMachine.Step?
        var unrestorable = ""
    }

    /// Runs the batch on the session's latest state and keeps the advanced state for the next batch.
    ///
    /// The latest state may be durable or not yet. Called under the lock.
    private func step(
        _ lines: [DecodedLine],
        from origin: CommandOrigin,
        at started: ContinuousClock.Instant
    ) async -> Stepped {
        var machine: SessionMachine
        // Read before the state is: a commit that fails while the state is read (an `await` may let one finish)
        // then discards this batch, rather than the batch stepping on a state the failure dropped.
        var generation = commits.generation
        do {
            machine = try await restored()
            if mayReachShareLimit(machine, lines: lines.count), !commits.isSettled {
                // The store's count read below must include this device's shares still committing; a commit
                // that fails meanwhile drops the state, which is then restored from the store.
                await settled()
                generation = commits.generation
                machine = try await restored()
            }
        } catch {
            return Stepped(
                ticket: commits.join(steppedIn: commits.generation),
                step: nil,
                unrestorable: String(describing: error)
            )
        }
        // Held only by the local while the batch runs, so `run` advances its snapshot without copying it.
        self.machine = nil
        if mayReachShareLimit(machine, lines: lines.count) {
            // The session's count only rises; deliveries lower the store's. Unreadable, the higher one stands.
            if let count = try? await store.pendingShareCount(device: identity) { machine.pendingSharesCounted(count) }
        }
        let step = machine.run(
            lines,
            ids: ids,
            clock: clock,
            admission: admission(lines.count, from: origin, at: started)
        )
        // A state a failed commit has since discarded is not kept (the chain discards this batch too).
        if generation == commits.generation { self.machine = machine }
        return Stepped(ticket: commits.join(steppedIn: generation), step: step)
    }

    /// At the batch's turn: its commit's outcome, its replies and the events it caused.
    ///
    /// The outcome is `pending`, from ``CommitPipeline``; without one, the batch commits now unless a batch it was
    /// stepped on failed. The replies and events are emitted before its ``EngineEvent/batchAnswered(_:)``.
    private func commit(
        _ stepped: Stepped,
        _ pending: OneShot<Void>?,
        lines: [DecodedLine]
    ) async -> (replies: [Reply], caused: [EngineEvent]) {
        guard let step = stepped.step else {
            return (SessionMachine.unavailable(lines), [.storageFailed(device: identity, reason: stepped.unrestorable)])
        }
        guard commits.mayCommit(stepped.ticket) else {
            // Stepped on a batch whose commit failed: its changes build on ones that are not stored, and its
            // replays may answer commands that were not kept. Nothing of it is stored; every command is retried.
            // (The batches ``CommitPipeline`` discards end here: the failed batch's turn came first and ended
            // their generation, so their result, ``CommitPipeline/Discarded``, is never awaited.)
            return (SessionMachine.unavailable(lines), [.storageFailed(device: identity, reason: lastCommitFailure)])
        }
        guard step.hasChanges else { return (step.replies, step.events) }
        do {
            if let pending { try await pending.value() } else { try await store.commit(step.batch) }
        } catch {
            // The state this batch and any stepped on top of it advanced is dropped; the next batch restores the
            // session from the store, which the failed transaction left unchanged.
            machine = nil
            commits.commitFailed()
            lastCommitFailure = String(describing: error)
            return (Self.unstored(step, lines: lines), [.storageFailed(device: identity, reason: lastCommitFailure)])
        }
        return (step.replies, step.events)
    }

    /// Keeps the advanced machine and returns the step's replies and events if it committed.
    ///
    /// Otherwise forgets both, and the events are the storage failure alone.
    private func conclude(
        _ step: consuming SessionMachine.Step,
        advanced machine: consuming SessionMachine,
        lines: [DecodedLine],
        failure: (any Error)?
    ) -> (replies: [Reply], caused: [EngineEvent]) {
        if let failure {
            // Nothing of the batch is kept: the advanced machine is dropped, the next batch restores the
            // session from the store (unchanged by the failed transaction), and the wearable may retry
            // every command that needed storage.
            self.machine = nil
            return (
                Self.unstored(step, lines: lines),
                [.storageFailed(device: identity, reason: String(describing: failure))]
            )
        }
        self.machine = machine
        return (step.replies, step.events)
    }

    /// The step's replies with `storage_unavailable` for every one that needed its commit.
    ///
    /// The wearable may retry them.
    private static func unstored(_ step: borrowing SessionMachine.Step, lines: [DecodedLine]) -> [Reply] {
        zip(step.replies, lines).map { reply, line in
            SessionMachine.Step.needsCommit(reply, answering: line) ? .error(.storageUnavailable, id: line.id) : reply
        }
    }

    /// The limits a batch of `count` lines from `origin` runs under.
    ///
    /// One bucket update per batch, for device batches only (an operator's `workoutctl send` is not a device flooding
    /// the hub), and two flags read.
    private func admission(_ count: Int, from origin: CommandOrigin, at now: ContinuousClock.Instant) -> BatchAdmission
    {
        var admission = BatchAdmission(
            refusesNewWorkouts: store.refusesNewWorkouts,
            pendingShareLimit: limits.pendingShares
        )
        if origin == .device {
            let taken = bucket.take(count, at: now, rate: limits.rate, burst: limits.burst)
            admission.admitted = taken.admitted
            admission.retryAfterMilliseconds = taken.retryAfterMilliseconds
        }
        return admission
    }

    /// Whether a batch of `lines` could queue the share that reaches the limit, by the session's own count.
    private func mayReachShareLimit(_ machine: SessionMachine, lines: Int) -> Bool {
        let limit = limits.pendingShares
        return limit > 0 && machine.snapshot.pendingShares + lines > limit
    }

    private func restored() async throws -> SessionMachine {
        if let machine { return machine }
        let snapshot = try await store.restore(identity)
        // Another call may have restored it while this one awaited the store.
        if let machine { return machine }
        let restored = SessionMachine(identity: identity, snapshot: snapshot)
        machine = restored
        return restored
    }
}

extension SessionMachine {
    /// Replies for a batch that could not run because the session could not be restored.
    static func unavailable(_ lines: [DecodedLine]) -> [Reply] {
        lines.map { line in
            switch line.command {
            case .failure(let error): .error(error, id: line.id)
            case .success: .error(.storageUnavailable, id: line.id)
            }
        }
    }
}

/// An actor with no state, whose default executor serves a ``DeviceSession`` placed on no executor.
private actor DefaultExecutorOwner {}
