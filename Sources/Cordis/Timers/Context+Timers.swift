/// Timers (cordis's timer plugin): each is an effect of this context's fiber, runs on the world's clock
/// (`Context(clock:)`), is cancelled when the fiber unloads, and never fires after. A callback that
/// throws is logged and the fiber goes on. Delays that cannot be waited for (negative, not finite, more
/// than 10^9 seconds, or zero for an interval) throw `CordisError` `.invalidDuration` naming the plugin.
extension Context {
    /// Runs `callback` once after `delay` (cordis's `ctx.setTimeout`), unless the returned handle is
    /// disposed or the fiber unloads first.
    ///
    /// - Throws: `.invalidDuration`; `.inactiveEffect` unless the fiber is loading or active.
    @discardableResult
    public func timeout(
        after delay: Duration, _ callback: @escaping @CordisActor () async throws -> Void
    ) throws -> EffectHandle {
        let delay = try TimerDelay.checked(delay, timer: "ctx.timeout()", plugin: fiber.name)
        let scope = try fiber.openScope()
        // Unowned, not weak, and no logger made up front: a weak reference (and the one a context's logger
        // keeps to its context) would give the handle and the context a side table each, and every later
        // retain and release of them a trip there. Both outlive the pending timer: reverting the handle
        // (which the fiber's unload does) cancels it first.
        let fiber = self.fiber
        let handle = try scope.collectTimer("ctx.timeout()", in: world.timers) { handle in
            world.timers.schedule(after: delay) { [unowned handle, unowned fiber] in
                guard !handle.isDisposed else { return }
                handle.detach()
                let logger = fiber.world.logger(for: fiber)
                Task { @CordisActor in
                    do { try await callback() } catch { logger.error("timeout callback of \(logger.name) failed: \(error)") }
                }
            }
        }
        return handle
    }

    /// `timeout(after:_:)` with the delay in seconds.
    @discardableResult
    public func timeout(
        seconds: Double, _ callback: @escaping @CordisActor () async throws -> Void
    ) throws -> EffectHandle {
        try timeout(after: TimerDelay.checked(seconds: seconds, timer: "ctx.timeout()", plugin: fiber.name), callback)
    }

    /// Waits for `delay` (cordis's `ctx.sleep`).
    ///
    /// - Throws: `CordisError` `.unloaded` as soon as the fiber unloads (or its effects are reverted)
    ///   before the delay has passed; `CancellationError` when the waiting task is cancelled;
    ///   `.invalidDuration`; `.inactiveEffect` unless the fiber is loading or active.
    public func sleep(for delay: Duration) async throws {
        let delay = try TimerDelay.checked(delay, timer: "ctx.sleep()", plugin: fiber.name)
        let scope = try fiber.openScope()
        let wait = SleepWait(timer: PendingTimer(queue: world.timers))
        let name = fiber.name
        let handle = try scope.collectEffect("ctx.sleep()") {
            wait.finish(.failure(CordisError(
                .unloaded, "ctx.sleep() of plugin \(name) ended early: the plugin's context has been disposed")))
        }
        defer { handle.detach() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                wait.continuation = continuation
                wait.timer.schedule(after: delay) { wait.finish(.success(())) }
            }
        } onCancel: {
            Task { @CordisActor in wait.finish(.failure(CancellationError())) }
        }
    }

    /// `sleep(for:)` with the delay in seconds.
    public func sleep(seconds: Double) async throws {
        try await sleep(for: TimerDelay.checked(seconds: seconds, timer: "ctx.sleep()", plugin: fiber.name))
    }

    /// Runs `callback` every `period` (cordis's `ctx.setInterval`), the first time one period from now,
    /// until the returned handle is disposed or the fiber unloads. Each wait starts when the previous
    /// callback has returned, so calls never overlap.
    ///
    /// - Throws: `.invalidDuration` (a period must be greater than zero); `.inactiveEffect` as above.
    @discardableResult
    public func interval(
        every period: Duration, _ callback: @escaping @CordisActor () async throws -> Void
    ) throws -> EffectHandle {
        let period = try TimerDelay.checked(period, timer: "ctx.interval()", plugin: fiber.name, positive: true)
        let scope = try fiber.openScope()
        let timer = PendingTimer(queue: world.timers)
        let handle = try scope.collectImmediate("ctx.interval()") { timer.cancel() }
        let logger = self.logger
        IntervalRun(timer: timer, period: period) { [weak handle] in
            guard let handle, !handle.isDisposed else { return false }
            do { try await callback() } catch { logger.error("interval callback of \(logger.name) failed: \(error)") }
            return !handle.isDisposed
        }.next()
        return handle
    }

    /// `interval(every:_:)` with the period in seconds.
    @discardableResult
    public func interval(
        seconds: Double, _ callback: @escaping @CordisActor () async throws -> Void
    ) throws -> EffectHandle {
        try interval(
            every: TimerDelay.checked(seconds: seconds, timer: "ctx.interval()", plugin: fiber.name, positive: true),
            callback)
    }

    /// The ticks of an interval as an `AsyncSequence`: tick `n` (1, 2, …) arrives `n` periods from now,
    /// and the sequence ends when the fiber unloads or `ticks.handle` is disposed. Ticks not yet read are
    /// buffered up to one: a reader slower than the period gets the latest tick.
    ///
    /// - Throws: `.invalidDuration` (a period must be greater than zero); `.inactiveEffect` as above.
    public func interval(every period: Duration) throws -> TimerTicks {
        let period = try TimerDelay.checked(period, timer: "ctx.interval()", plugin: fiber.name, positive: true)
        let scope = try fiber.openScope()
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let timer = PendingTimer(queue: world.timers)
        let handle = try scope.collectEffect("ctx.interval()") {
            timer.cancel()
            continuation.finish()
        }
        var tick = 0
        IntervalRun(timer: timer, period: period) { [weak handle] in
            guard let handle, !handle.isDisposed else { return false }
            tick += 1
            continuation.yield(tick)
            return true
        }.next()
        return TimerTicks(stream: stream, handle: handle)
    }

    /// Wraps `callback` so it runs at most once per `delay` (cordis's `ctx.throttle`): a call at least
    /// `delay` after the last run runs at once; an earlier one is held and runs when `delay` has passed
    /// since the last run, with the latest value (unless `trailing` is false, which drops it). Disposing
    /// the throttle or unloading the fiber cancels a held call, and later calls do nothing.
    ///
    /// - Throws: `.invalidDuration`; `.inactiveEffect` as above.
    public func throttle<Value>(
        _ delay: Duration, trailing: Bool = true, _ callback: @escaping @CordisActor (Value) throws -> Void
    ) throws -> Throttled<Value> {
        let delay = try TimerDelay.checked(delay, timer: "ctx.throttle()", plugin: fiber.name)
        let scope = try fiber.openScope()
        let throttled = Throttled(
            delay: delay, trailing: trailing, clock: world.timerClock, timer: PendingTimer(queue: world.timers),
            logger: logger, callback: callback)
        throttled.handle = try scope.collectEffect("ctx.throttle()") { [weak throttled] in throttled?.cancelHeld() }
        return throttled
    }

    /// Wraps `callback` so it runs once calls have stopped for `delay` (cordis's `ctx.debounce`): each call
    /// restarts the wait, and the last value is passed. Disposing the debounce or unloading the fiber
    /// cancels a waiting call, and later calls do nothing.
    ///
    /// - Throws: `.invalidDuration`; `.inactiveEffect` as above.
    public func debounce<Value>(
        _ delay: Duration, _ callback: @escaping @CordisActor (Value) throws -> Void
    ) throws -> Debounced<Value> {
        let delay = try TimerDelay.checked(delay, timer: "ctx.debounce()", plugin: fiber.name)
        let scope = try fiber.openScope()
        let debounced = Debounced(
            delay: delay, timer: PendingTimer(queue: world.timers), logger: logger, callback: callback)
        debounced.handle = try scope.collectEffect("ctx.debounce()") { [weak debounced] in debounced?.cancelWaiting() }
        return debounced
    }
}

/// The periods of one interval: after each period `tick` runs (in a task of its own when it awaits);
/// the next period starts once it returns true.
@CordisActor
private struct IntervalRun {
    let timer: PendingTimer
    let period: Duration
    let tick: @CordisActor () async -> Bool

    func next() {
        let run = self
        timer.schedule(after: period) {
            Task { @CordisActor in
                if await run.tick() { run.next() }
            }
        }
    }
}

/// One `ctx.sleep`: its caller's continuation, resumed once, and the timer behind it.
@CordisActor
private final class SleepWait {
    var continuation: CheckedContinuation<Void, any Error>?
    let timer: PendingTimer

    init(timer: PendingTimer) {
        self.timer = timer
    }

    /// Resumes the caller with `result` (the first outcome wins) and cancels the timer.
    func finish(_ result: Result<Void, any Error>) {
        timer.cancel()
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}

/// The ticks of `ctx.interval(every:)`: 1, 2, 3, … until the fiber unloads or `handle` is disposed.
public struct TimerTicks: AsyncSequence, Sendable {
    /// The tick's number, from 1.
    public typealias Element = Int

    let stream: AsyncStream<Int>
    /// The interval's effect: disposing it ends the sequence.
    public let handle: EffectHandle

    /// An iterator over the ticks.
    public func makeAsyncIterator() -> AsyncStream<Int>.Iterator {
        stream.makeAsyncIterator()
    }
}
