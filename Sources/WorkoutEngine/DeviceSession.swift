import Foundation
import Logging
import WorkoutProtocol

/// One device's session: runs its commands in order against its state and commits each batch.
///
/// A batch is what one read from the device delivered. Its commands share one store transaction
/// (group commit), and its replies are released only after that transaction commits.
public actor DeviceSession {
    public nonisolated let identity: DeviceIdentity
    private let store: any WorkoutStore
    private let ids: IDAllocator
    private let clock: @Sendable () -> Date
    private let events: EngineEvents
    private var snapshot: DeviceSnapshot?

    init(identity: DeviceIdentity, store: any WorkoutStore, ids: IDAllocator, clock: @escaping @Sendable () -> Date, events: EngineEvents) {
        self.identity = identity
        self.store = store
        self.ids = ids
        self.clock = clock
        self.events = events
    }

    /// The current state, restoring it from the store on first use.
    public func state() async throws -> SessionState {
        try await restored().state
    }

    /// Runs a batch of decoded lines and returns one reply per line, in order.
    public func handle(_ lines: [CommandLine]) async -> [Reply] {
        guard !lines.isEmpty else { return [] }
        let current: DeviceSnapshot
        do {
            current = try await restored()
        } catch {
            return lines.map { line in Self.unavailableReply(for: line) }
        }

        var working = current
        var batch = StoreBatch(device: identity, state: current.state)
        var replies: [Reply] = []
        var needsCommit: [Bool] = []
        var emitted: [EngineEvent] = []
        replies.reserveCapacity(lines.count)

        for line in lines {
            if let id = line.id, var previous = working.recentReplies[id] {
                previous.replayed = true
                replies.append(previous)
                needsCommit.append(false)
                emitted.append(.commandHandled(device: identity, command: line, reply: previous))
                continue
            }
            let reply: Reply
            switch line.command {
            case .failure(let error):
                replies.append(.error(error, id: line.id))
                needsCommit.append(false)
                emitted.append(.commandHandled(device: identity, command: line, reply: replies[replies.count - 1]))
                continue
            case .success(let command):
                reply = execute(command, id: line.id, on: &working, batch: &batch, events: &emitted)
            }
            if let id = line.id {
                working.recentReplies.remember(reply, for: id)
                batch.replies.append(RecentReply(id: id, reply: reply))
            }
            replies.append(reply)
            needsCommit.append(true)
            emitted.append(.commandHandled(device: identity, command: line, reply: reply))
        }
        batch.state = working.state

        if !batch.isEmpty || batch.state != current.state {
            do {
                try await store.commit(batch)
            } catch {
                events.emit(.storageFailed(device: identity, reason: String(describing: error)))
                // Nothing of the batch is kept: the wearable may retry every command that needed storage.
                return zip(lines, zip(replies, needsCommit)).map { line, pair in
                    pair.1 ? Self.unavailableReply(for: line) : pair.0
                }
            }
        }
        snapshot = working
        for event in emitted { events.emit(event) }
        return replies
    }

    private func execute(
        _ command: Command, id: CommandID?, on snapshot: inout DeviceSnapshot, batch: inout StoreBatch, events: inout [EngineEvent]
    ) -> Reply {
        switch command {
        case .startWorkout(let workout):
            guard snapshot.state.activeWorkout == nil else {
                return .error(.workoutAlreadyActive, id: id)
            }
            let record = WorkoutRecord(
                id: ids.nextWorkoutID(), device: identity, workout: workout, startedAt: clock(), startCommandID: id)
            snapshot.state = .active(record)
            batch.workouts.append(record)
            events.append(.workoutStarted(record))
            return .ok(.workoutStarted(workoutID: record.id), id: id)

        case .endWorkout:
            guard var record = snapshot.state.activeWorkout else {
                return .error(.noActiveWorkout, id: id)
            }
            record.endedAt = max(clock(), record.startedAt)
            record.endCommandID = id
            snapshot.state = .idle
            snapshot.lastEndedWorkout = record
            batch.workouts.append(record)
            events.append(.workoutEnded(record))
            return .ok(.workoutEnded(workoutID: record.id, durationSeconds: record.durationSeconds ?? 0), id: id)

        case .shareWorkout(let service):
            guard let workout = snapshot.lastEndedWorkout else {
                return .error(.nothingToShare, id: id)
            }
            let share = ShareRecord(
                id: ids.nextShareID(), workoutID: workout.id, device: identity, service: service,
                queuedAt: clock(), commandID: id)
            batch.shares.append(share)
            events.append(.shareQueued(share))
            return .ok(.workoutShared(workoutID: workout.id, service: service, shareID: share.id), id: id)
        }
    }

    private func restored() async throws -> DeviceSnapshot {
        if let snapshot { return snapshot }
        let loaded = try await store.restore(identity)
        // Another batch may have restored it while this one awaited the store.
        if let snapshot { return snapshot }
        snapshot = loaded
        return loaded
    }

    private static func unavailableReply(for line: CommandLine) -> Reply {
        switch line.command {
        case .failure(let error): .error(error, id: line.id)
        case .success: .error(.storageUnavailable, id: line.id)
        }
    }
}
