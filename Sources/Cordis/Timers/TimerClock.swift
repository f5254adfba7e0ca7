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

/// The task behind one timer, cancelled when its effect is reverted.
@CordisActor
final class TimerTask {
    var task: Task<Void, Never>?

    /// Cancels the task (a wait on the clock ends at once, and the timer never fires).
    func cancel() {
        task?.cancel()
        task = nil
    }
}
