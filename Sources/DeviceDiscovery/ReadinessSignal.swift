import WorkoutEngine

/// A one-shot "ready" (or "failed before getting ready") that any number of tasks can await.
typealias ReadinessSignal = OneShot<Void>

extension OneShot where Value == Void {
    func wait() async throws { try await value() }

    func signal() { finish(.success(())) }

    func fail(_ error: any Error) { finish(.failure(error)) }
}
