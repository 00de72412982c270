import PostgresNIO

/// At most ``maximumConnections`` open connections to the central server, reused from batch to batch.
///
/// Why our own and not postgres-nio's `PostgresClient`: its pool connects in the background, so a lease
/// waits without end while the server refuses the password or cannot be reached, and the reason never
/// reaches the shipper, whose status must show it; and a query stuck on a torn-down channel (postgres-nio
/// 1.33.2 writes queries without a write promise, and their awaits ignore cancellation) keeps its lease
/// for good, so two such hangs would empty a pool of two. Here a lease opens the connection itself, on the
/// caller's task, and throws what went wrong; a connection that failed or was abandoned by a deadline is
/// given back as not reusable, closed and forgotten, and its place is free at once.
actor CentralConnectionPool {
    /// A connection while it is leased; give it back with ``release(_:reusable:)``.
    struct Lease: Sendable {
        let connection: PostgresConnection
        /// The ``CentralConnectionPool/currentGeneration`` it was opened in.
        ///
        /// A password change starts a new generation.
        let generation: Int
    }

    struct PoolClosedError: Error, CustomStringConvertible {
        var description: String { "the connection pool is closed (shutting down)" }
    }

    let maximumConnections: Int
    private let currentGeneration: @Sendable () -> Int
    private let open: @Sendable (_ id: Int) async throws -> PostgresConnection
    private let openCountChanged: @Sendable (Int) -> Void
    private var idle: [Lease] = []
    /// Leased, idle and being opened.
    private(set) var openCount = 0 {
        didSet { if openCount != oldValue { openCountChanged(openCount) } }
    }
    /// The most open at once since the pool was made.
    private(set) var peakOpenCount = 0
    private var nextConnectionID = 1
    private var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextWaiterID = 0
    private var closed = false

    /// - Parameters:
    ///   - currentGeneration: connections opened in an older generation are closed instead of reused.
    ///   - openCountChanged: told every change of ``openCount`` (for status and metrics).
    ///   - open: opens (and readies) connection `id`; its errors are what ``lease()`` throws.
    init(
        maximumConnections: Int,
        currentGeneration: @escaping @Sendable () -> Int = { 0 },
        openCountChanged: @escaping @Sendable (Int) -> Void = { _ in },
        open: @escaping @Sendable (_ id: Int) async throws -> PostgresConnection
    ) {
        self.maximumConnections = max(1, maximumConnections)
        self.currentGeneration = currentGeneration
        self.openCountChanged = openCountChanged
        self.open = open
    }

    /// An idle connection of the current generation, else a new one, else the first one given back.
    ///
    /// A new one is opened only while fewer than the maximum are open.
    func lease() async throws -> Lease {
        while true {
            guard !closed else { throw PoolClosedError() }
            try Task.checkCancellation()
            let generation = currentGeneration()
            while let candidate = idle.popLast() {
                if candidate.generation == generation, !candidate.connection.isClosed { return candidate }
                forget(candidate)
            }
            if openCount < maximumConnections {
                openCount += 1
                peakOpenCount = max(peakOpenCount, openCount)
                let id = nextConnectionID
                nextConnectionID += 1
                do {
                    return Lease(connection: try await open(id), generation: generation)
                } catch {
                    openCount -= 1
                    wakeOneWaiter()
                    throw error
                }
            }
            try await waitForRelease()
        }
    }

    /// Back into the pool, or closed when it failed, was abandoned, is closed or is of an older generation.
    func release(_ lease: Lease, reusable: Bool) {
        if reusable, !closed, lease.generation == currentGeneration(), !lease.connection.isClosed {
            idle.append(lease)
        } else {
            forget(lease)
        }
        wakeOneWaiter()
    }

    /// Opens connections until ``maximumConnections`` are open, side by side, and keeps them idle.
    ///
    /// So that the first overlapping batch does not wait for a connection's start-up. Throws the first failure.
    func fill() async throws {
        let missing = maximumConnections - openCount
        guard missing > 0 else { return }
        // Every lease is given back, whichever of them failed (a server at its own connection limit refuses some).
        let (leases, failure) = await withThrowingTaskGroup(of: Lease.self) { group in
            for _ in 0..<missing { group.addTask { try await self.lease() } }
            var leases: [Lease] = []
            var failure: (any Error)?
            while let result = await group.nextResult() {
                switch result {
                case .success(let lease): leases.append(lease)
                case .failure(let error): failure = failure ?? error
                }
            }
            return (leases, failure)
        }
        for lease in leases { release(lease, reusable: true) }
        if let failure { throw failure }
    }

    /// Closes idle connections until at most `count` are open: a hub that has caught up keeps one.
    func trim(toAtMost count: Int) {
        while openCount > count, !idle.isEmpty {
            forget(idle.removeFirst())
        }
    }

    /// Closes the idle connections and fails every waiter; leased ones are closed as they come back.
    func close() {
        closed = true
        trim(toAtMost: 0)
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting { waiter.continuation.resume(throwing: PoolClosedError()) }
    }

    private func forget(_ lease: Lease) {
        lease.connection.closeInBackground()
        openCount -= 1
    }

    private func waitForRelease() async throws {
        let id = nextWaiterID
        nextWaiterID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// The woken lease looks again: an idle connection or a free place is there for it.
    private func wakeOneWaiter() {
        guard !waiters.isEmpty else { return }
        waiters.removeFirst().continuation.resume()
    }
}
