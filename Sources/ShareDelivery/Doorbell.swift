import Synchronization

/// Wakes one waiting task: rung by the engine's `shareQueued` event, waited on by the delivery loop.
///
/// A ring with nobody waiting is kept (once), so a share queued while the loop was busy is not missed.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when rung (true), when `timeout` passes or the task is cancelled (false).
    /// Without a `timeout` it waits for the ring alone: no timer at all.
    @discardableResult
    func wait(timeout: Duration?) async -> Bool {
        guard let timeout else {
            await waitForRing()
            return !Task.isCancelled
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitForRing()
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let rung = await group.next() ?? false
            group.cancelAll()
            return rung
        }
    }

    private func waitForRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
