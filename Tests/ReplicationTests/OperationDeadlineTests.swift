import Synchronization
import Testing

@testable import Replication

/// The shipper's deadline gives up on an operation that ignores cancellation.
///
/// As postgres-nio's query on a torn-down channel does, instead of waiting for it as a task group would.
@Suite("operation deadline", .timeLimit(.minutes(1)))
struct OperationDeadlineTests {
    struct Refused: Error {}

    @Test func anOperationThatIgnoresCancellationDoesNotHoldTheCaller() async {
        let gate = Gate()
        defer { gate.open() }
        await #expect(throws: ReplicationTimeoutError.self) {
            try await withOperationDeadline(.milliseconds(20)) {
                await gate.passed()
                return 1
            }
        }
    }

    @Test func aValueThatArrivesTooLateIsHandedOverForCleanUp() async {
        let gate = Gate()
        let (lateValues, late) = AsyncStream.makeStream(of: Int.self)
        let yieldLate: @Sendable (Int) -> Void = { late.yield($0) }
        await #expect(throws: ReplicationTimeoutError.self) {
            try await withOperationDeadline(.milliseconds(20), lateResult: yieldLate) {
                await gate.passed()
                return 42
            }
        }
        gate.open()
        var iterator = lateValues.makeAsyncIterator()
        #expect(await iterator.next() == 42)
    }

    @Test func cancellingTheCallerEndsTheWait() async {
        let gate = Gate()
        defer { gate.open() }
        let caller = Task {
            try await withOperationDeadline(.seconds(3600)) {
                await gate.passed()
                return 1
            }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }

    @Test func resultsAndErrorsPassThrough() async throws {
        #expect(try await withOperationDeadline(.seconds(3600)) { 7 } == 7)
        await #expect(throws: Refused.self) {
            try await withOperationDeadline(.seconds(3600)) { () async throws -> Int in throw Refused() }
        }
    }
}

/// Holds whoever waits until opened, deaf to cancellation.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func passed() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
