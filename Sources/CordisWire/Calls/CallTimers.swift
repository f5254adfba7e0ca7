/// Runs jobs after a delay, and cancels them: what `PendingCalls` needs to time calls out.
///
/// `EventLoop` is one (its timers run on the loop thread); tests can supply a scheduler they fire by
/// hand. Jobs must be cheap and must not block.
package protocol CallTimers: Sendable {
    /// Runs `job` once after `delay`; returns an id for `cancelTimer(_:)`.
    @discardableResult
    func schedule(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> UInt64
    /// Cancels a job that has not run yet; nothing happens when it already ran.
    func cancelTimer(_ id: UInt64)
}

extension EventLoop: CallTimers {}
