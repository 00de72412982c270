import ControlProtocol
import Metrics
import Synchronization
import WorkoutEngine
import WorkoutProtocol

/// Counts what the engine did, for `status` and for the Prometheus metrics.
///
/// Fed from ``EngineEvents``: `workoutd_commands_total{type,outcome}`, `workoutd_invalid_lines_total`,
/// `workoutd_replays_total`, plus the totals `status` reports. Observers run on the device's path,
/// so recording is a lock and a few additions.
public final class ActivityTally: Sendable {
    private struct State {
        var counters = ActivityCounters()
        var pendingRestart: [String] = []
        /// One swift-metrics counter per (type, outcome) pair, made on first use, at
        /// `typeIndex * outcomeCount + outcomeIndex`: found per command without hashing.
        var commandCounters = [Counter?](repeating: nil, count: typeCount * outcomeCount)
    }

    /// Kept once: `allCases` builds a new array on every use.
    private static let commandTypes = CommandType.allCases
    private static let errorCodes = ErrorCode.allCases
    /// The command types and `invalid`; `ok` and the error codes.
    private static let typeCount = commandTypes.count + 1
    private static let outcomeCount = errorCodes.count + 1

    private let state = Mutex(State())
    private let invalidLines = Counter(label: "workoutd_invalid_lines_total")
    private let replays = Counter(label: "workoutd_replays_total")
    private let appliedReloads = Counter(label: "workoutd_config_reloads_total", dimensions: [("result", "applied")])
    private let rejectedReloads = Counter(label: "workoutd_config_reloads_total", dimensions: [("result", "rejected")])

    public init() {}

    public var counters: ActivityCounters { state.withLock { $0.counters } }

    /// Keys whose new value a reload read but that take effect only after a restart.
    public var pendingRestart: [String] { state.withLock { $0.pendingRestart } }

    public func record(_ event: EngineEvent) {
        switch event {
        case .batchAnswered(let batch):
            for (line, reply) in batch.handled { recordCommand(line, reply: reply) }
        case .batchReceived:
            break
        case .workoutStarted:
            state.withLock { $0.counters.workoutsStarted += 1 }
        case .workoutEnded:
            state.withLock { $0.counters.workoutsEnded += 1 }
        case .shareQueued:
            state.withLock { $0.counters.sharesQueued += 1 }
        case .shareDelivered:
            state.withLock { $0.counters.sharesDelivered += 1 }
        case .shareFailed:
            state.withLock { $0.counters.shareFailures += 1 }
        case .storageFailed:
            break
        }
    }

    /// A configuration reload that was applied, or rejected (the old configuration stayed); an applied one
    /// names the keys that changed but wait for a restart.
    public func recordReload(applied: Bool, pendingRestart: [String] = []) {
        state.withLock { state in
            if applied {
                state.counters.reloads += 1
                state.pendingRestart = pendingRestart
            } else {
                state.counters.rejectedReloads += 1
            }
        }
        (applied ? appliedReloads : rejectedReloads).increment()
    }

    private func recordCommand(_ line: DecodedLine, reply: Reply) {
        let type: String
        let typeIndex: Int
        switch line.command {
        case .success(let command):
            type = command.type.rawValue
            typeIndex = Self.commandTypes.firstIndex(of: command.type) ?? 0
        case .failure:
            type = "invalid"
            typeIndex = Self.typeCount - 1
        }
        let outcome: String
        let outcomeIndex: Int
        switch reply.outcome {
        case .ok:
            outcome = "ok"
            outcomeIndex = 0
        case .error(let error):
            outcome = error.code.rawValue
            outcomeIndex = (Self.errorCodes.firstIndex(of: error.code) ?? 0) + 1
        }
        let slot = typeIndex * Self.outcomeCount + outcomeIndex
        let counter = state.withLock { state in
            state.counters.commands += 1
            if !reply.isSuccess { state.counters.errors += 1 }
            if case .failure = line.command { state.counters.invalidLines += 1 }
            if reply.replayed { state.counters.replays += 1 }
            if let counter = state.commandCounters[slot] { return counter }
            let counter = Counter(label: "workoutd_commands_total", dimensions: [("type", type), ("outcome", outcome)])
            state.commandCounters[slot] = counter
            return counter
        }
        counter.increment()
        if case .failure = line.command { invalidLines.increment() }
        if reply.replayed { replays.increment() }
    }
}
