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
        /// One swift-metrics counter per (type, outcome) pair, made on first use.
        ///
        /// Each sits at `typeIndex * outcomeCount + outcomeIndex`, so it is found per command without hashing.
        var commandCounters = [Counter?](repeating: nil, count: typeCount * outcomeCount)
    }

    /// Kept once: `allCases` builds a new array on every use.
    private static let commandTypes = CommandType.allCases
    private static let errorCodes = ErrorCode.allCases
    /// The command types and `invalid`; `ok` and the error codes.
    private static let typeCount = commandTypes.count + 1
    private static let outcomeCount = errorCodes.count + 1

    private let state = Mutex(State())
    private let metrics: any MetricsFactory
    private let invalidLines: Counter
    private let replays: Counter
    private let appliedReloads: Counter
    private let rejectedReloads: Counter

    /// `metrics`: the backend the counters record into.
    public init(metrics: any MetricsFactory = MetricsSystem.factory) {
        self.metrics = metrics
        invalidLines = Counter(label: "workoutd_invalid_lines_total", factory: metrics)
        replays = Counter(label: "workoutd_replays_total", factory: metrics)
        appliedReloads = Counter(
            label: "workoutd_config_reloads_total",
            dimensions: [("result", "applied")],
            factory: metrics
        )
        rejectedReloads = Counter(
            label: "workoutd_config_reloads_total",
            dimensions: [("result", "rejected")],
            factory: metrics
        )
    }

    public var counters: ActivityCounters { state.withLock { $0.counters } }

    /// Keys whose new value a reload read but that take effect only after a restart.
    public var pendingRestart: [String] { state.withLock { $0.pendingRestart } }

    public func record(_ event: EngineEvent) {
        record(EmittedEvents([event]))
    }

    /// Records a batch's events under one lock.
    ///
    /// The Prometheus counters are then added to once per kind of command and outcome the batch had, not once per
    /// command.
    public func record(_ emitted: EmittedEvents) {
        let (first, more, invalid, replayed) = state.withLock {
            state -> ((Counter, Int)?, [(Counter, Int)], Int, Int) in
            let before = state.counters
            var perSlot = SlotCounts()
            if let batch = emitted.answered {
                count(batch.lines, batch.replies, into: &state, perSlot: &perSlot)
            }
            state.counters.workoutsStarted += emitted.workoutsStarted
            state.counters.workoutsEnded += emitted.workoutsEnded
            state.counters.sharesQueued += emitted.sharesQueued
            state.counters.sharesDelivered += emitted.sharesDelivered
            state.counters.shareFailures += emitted.shareFailures
            let first = perSlot.first.map { (counter(for: $0.slot, in: &state), $0.count) }
            let more = perSlot.more.map { (counter(for: $0.slot, in: &state), $0.count) }
            return (
                first, more, state.counters.invalidLines - before.invalidLines,
                state.counters.replays - before.replays
            )
        }
        if let (counter, count) = first { counter.increment(by: Int64(count)) }
        for (counter, count) in more { counter.increment(by: Int64(count)) }
        if invalid > 0 { invalidLines.increment(by: Int64(invalid)) }
        if replayed > 0 { replays.increment(by: Int64(replayed)) }
    }

    /// A configuration reload that was applied, or rejected (the old configuration stayed).
    ///
    /// An applied one names the keys that changed but wait for a restart.
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

    /// Counts one handled command in `state` and in `perSlot`.
    ///
    /// `perSlot` holds its Prometheus counter's slot, in first-seen order. Counts a batch's handled lines. By index and
    /// through accessors that read in place: a line or reply bound to a local is copied whole (a retain per string it
    /// holds), for three small facts.
    private func count(
        _ lines: [DecodedLine],
        _ replies: [Reply],
        into state: inout State,
        perSlot: inout SlotCounts
    ) {
        // (Written so: with the reads as plain arguments, Swift 6.3.1's optimizer fails an ownership check and
        // the release build stops.)
        for index in lines.indices where index < replies.count {
            let error = replies[index].isSuccess ? nil : replies[index].errorCode
            count(
                type: lines[index].commandType,
                error: error,
                replayed: replies[index].replayed,
                into: &state,
                perSlot: &perSlot
            )
        }
    }

    /// Counts one line's outcome.
    ///
    /// - Parameters:
    ///   - type: the line's command type, nil for a line that did not decode.
    ///   - error: the reply's error code, nil for a success.
    private func count(
        type: CommandType?,
        error: ErrorCode?,
        replayed: Bool,
        into state: inout State,
        perSlot: inout SlotCounts
    ) {
        let typeIndex: Int
        if let type {
            typeIndex = Self.commandTypes.firstIndex(of: type) ?? 0
        } else {
            typeIndex = Self.typeCount - 1
            state.counters.invalidLines += 1
        }
        let outcomeIndex: Int
        if let error {
            outcomeIndex = (Self.errorCodes.firstIndex(of: error) ?? 0) + 1
            state.counters.errors += 1
        } else {
            outcomeIndex = 0
        }
        state.counters.commands += 1
        if replayed { state.counters.replays += 1 }
        perSlot.add(typeIndex * Self.outcomeCount + outcomeIndex)
    }

    /// The counter slots a batch counted, in first-seen order.
    ///
    /// The first is held inline: a lone command, the single-flight case, then counts without an array.
    private struct SlotCounts {
        var first: (slot: Int, count: Int)?
        var more: [(slot: Int, count: Int)] = []

        mutating func add(_ slot: Int) {
            if first?.slot == slot {
                first?.count += 1
            } else if first == nil {
                first = (slot, 1)
            } else if let index = more.firstIndex(where: { $0.slot == slot }) {
                more[index].count += 1
            } else {
                more.append((slot, 1))
            }
        }
    }

    /// The `workoutd_commands_total` counter of `slot`, made on first use.
    private func counter(for slot: Int, in state: inout State) -> Counter {
        if let counter = state.commandCounters[slot] { return counter }
        let typeIndex = slot / Self.outcomeCount
        let outcomeIndex = slot % Self.outcomeCount
        let type = typeIndex < Self.commandTypes.count ? Self.commandTypes[typeIndex].rawValue : "invalid"
        let outcome = outcomeIndex == 0 ? "ok" : Self.errorCodes[outcomeIndex - 1].rawValue
        let counter = Counter(
            label: "workoutd_commands_total",
            dimensions: [("type", type), ("outcome", outcome)],
            factory: metrics
        )
        state.commandCounters[slot] = counter
        return counter
    }
}
