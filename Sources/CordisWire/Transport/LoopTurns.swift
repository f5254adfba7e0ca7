import Synchronization

/// Lets a task await the end of an event loop's next turn: the loop handled what woke it (socket
/// events, queued jobs, due timers) and is about to wait again.
///
/// A waiter never wakes the loop itself: it resumes only after the loop did something, so awaiting
/// turns until a condition holds is waiting for the changes the loop makes, not polling. When the loop
/// stops, every waiter resumes. A test seam, not an API for users.
package final class LoopTurns: Sendable {
    private struct State {
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
        var stopped = false
    }

    private let state = Mutex(State())

    package init() {}

    /// Returns after the loop's next turn (at once when the loop stopped or the task is cancelled).
    package func next() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.stopped || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Called by the loop at the end of each turn.
    func finished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Called once by the loop when it stopped: every waiter, present and future, resumes at once.
    func stopped() {
        state.withLock { $0.stopped = true }
        finished()
    }
}
