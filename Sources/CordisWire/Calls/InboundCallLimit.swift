import Synchronization

/// The bound on calls a peer may have in flight at this side on one link: a call over the bound is
/// answered at once with an `error` of code `overloaded` instead of being queued.
///
/// For every inbound `call`, ask `admit(_:)`: nil means serve it, and call `finish(_:)` with its id
/// once its `result` or `error` is sent (or it is abandoned after the peer's `cancel`); otherwise send
/// the returned reply and do not serve the call. A call whose id is already in flight is refused with
/// `duplicate-call`. Thread-safe (one mutex).
package final class InboundCallLimit: Sendable {
    /// The default bound, the same as `PendingCalls.defaultMaxPending` on the calling side.
    package static let defaultMaxInFlight = 1024

    /// How many calls from the peer may be served at once.
    package let maxInFlight: Int
    private let inFlight = Mutex<Set<Int>>([])

    /// A limit of `maxInFlight` calls (at least 1).
    package init(maxInFlight: Int = defaultMaxInFlight) {
        self.maxInFlight = max(1, maxInFlight)
    }

    /// The number of calls being served.
    package var count: Int { inFlight.withLock { $0.count } }

    /// Admits `call`, or returns the `error` reply to send instead (`overloaded` over the bound,
    /// `duplicate-call` for an id already in flight).
    package func admit(_ call: RemoteCall) -> WireMessage? {
        let maxInFlight = self.maxInFlight
        let refusal = inFlight.withLock { ids -> RemoteCallError? in
            if ids.contains(call.id) {
                return RemoteCallError(.duplicateCall, "call \(call.id) is already in flight on this link")
            }
            guard ids.count < maxInFlight else {
                return RemoteCallError(
                    .overloaded, "\(maxInFlight) calls from this peer are already being served; retry later")
            }
            ids.insert(call.id)
            return nil
        }
        return refusal?.reply(to: call.id)
    }

    /// Marks call `id` as answered (or abandoned), freeing its place; false when it was not in flight.
    @discardableResult
    package func finish(_ id: Int) -> Bool {
        inFlight.withLock { $0.remove(id) != nil }
    }

    /// Forgets every call in flight; for a link that closed.
    package func reset() {
        inFlight.withLock { $0.removeAll() }
    }
}
