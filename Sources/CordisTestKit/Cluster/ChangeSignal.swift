import Synchronization

/// Tells a node's waits that something changed on it: bumped at each event the node pushes on the kit's
/// console link (a fiber's state, an entry change, a member's health), so a wait reads the status again
/// when it may have changed instead of on a timer. Thread-safe.
final class ChangeSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextID = 0
    }

    private let state = Mutex(State())

    /// How many changes were signalled so far.
    var generation: Int { state.withLock { $0.generation } }

    /// Signals a change: every wait returns.
    func bump() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a change after `generation` was signalled, or at `limit`, whichever comes first.
    func wait(after generation: Int, until limit: ContinuousClock.Instant) async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try? await Task.sleep(until: limit)
            let expired = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            expired?.resume()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let changed = state.withLock { state -> Bool in
                if state.generation != generation { return true }
                state.waiters.append((id, continuation))
                return false
            }
            if changed { continuation.resume() }
        }
    }
}
