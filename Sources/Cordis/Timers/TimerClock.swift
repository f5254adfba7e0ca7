/// The world's clock as the timers use it: time elapsed since the world began, and a wait that ends
/// when a duration has passed (or its task is cancelled). It opens the world's `any Clock<Duration>`
/// once, so throttles can subtract instants whatever the clock's instant type.
struct TimerClock: Sendable {
    /// The time elapsed since this value was made.
    let elapsed: @Sendable () -> Duration
    /// Waits for `duration`; throws when the waiting task is cancelled.
    let sleep: @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { duration in try await clock.sleep(for: duration) }
    }
}

/// One timer of a `TimerQueue` as its owner holds it: the id it has in the queue now (an interval
/// gets a new one each period), cancelled when its effect is reverted.
@CordisActor
final class PendingTimer {
    let queue: TimerQueue
    var id: UInt64?

    init(queue: TimerQueue) {
        self.queue = queue
    }

    /// Schedules `action` after `delay` in place of whatever this timer waited for.
    func schedule(after delay: Duration, _ action: @escaping @CordisActor () -> Void) {
        cancel()
        id = queue.schedule(after: delay, action)
    }

    /// Forgets the pending run, if any: it never happens.
    func cancel() {
        if let id { queue.cancel(id) }
        id = nil
    }
}
