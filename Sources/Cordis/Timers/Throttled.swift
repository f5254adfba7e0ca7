/// A function wrapped by `ctx.throttle`: call it as `throttled(value)` (or `throttled()` when `Value` is
/// `Void`); `callback` runs at most once per delay. An effect of the fiber that made it.
@CordisActor
public final class Throttled<Value> {
    private let delay: Duration
    private let trailing: Bool
    private let clock: TimerClock
    private let logger: Logger
    private let callback: @CordisActor (Value) throws -> Void
    /// When `callback` last ran (time elapsed on the world's clock), nil before the first run.
    private var lastRun: Duration?
    /// The held call, if any.
    private let held: PendingTimer
    /// The effect in the fiber's scope; disposed when the fiber unloads.
    var handle: EffectHandle?

    init(
        delay: Duration, trailing: Bool, clock: TimerClock, timer: PendingTimer, logger: Logger,
        callback: @escaping @CordisActor (Value) throws -> Void
    ) {
        self.delay = delay
        self.trailing = trailing
        self.clock = clock
        self.held = timer
        self.logger = logger
        self.callback = callback
    }

    /// Whether calls still run: false once disposed or once the fiber unloaded.
    public var isActive: Bool { !(handle?.isDisposed ?? true) }

    /// Runs `callback(value)` now if the delay has passed since the last run; otherwise holds the call
    /// until it has (replacing a held one), or drops it when the throttle has no trailing call.
    public func callAsFunction(_ value: Value) {
        guard isActive else { return }
        cancelHeld()
        let now = clock.elapsed()
        let remaining = lastRun.map { delay - (now - $0) } ?? .zero
        if remaining <= .zero {
            run(value)
            return
        }
        guard trailing else { return }
        held.schedule(after: remaining) { [weak self] in
            guard let self, self.isActive else { return }
            self.held.id = nil
            self.run(value)
        }
    }

    /// Stops the throttle: a held call is dropped and later calls do nothing.
    public func dispose() async {
        await handle?.revert()
    }

    func cancelHeld() {
        held.cancel()
    }

    private func run(_ value: Value) {
        lastRun = clock.elapsed()
        do { try callback(value) } catch { logger.error("throttled callback of \(logger.name) failed: \(error)") }
    }
}

extension Throttled where Value == Void {
    /// Calls the throttled function.
    public func callAsFunction() { callAsFunction(()) }
}

/// A function wrapped by `ctx.debounce`: call it as `debounced(value)` (or `debounced()`); `callback`
/// runs once calls have stopped for the delay. An effect of the fiber that made it.
@CordisActor
public final class Debounced<Value> {
    private let delay: Duration
    private let logger: Logger
    private let callback: @CordisActor (Value) throws -> Void
    private let waiting: PendingTimer
    /// The effect in the fiber's scope; disposed when the fiber unloads.
    var handle: EffectHandle?

    init(delay: Duration, timer: PendingTimer, logger: Logger, callback: @escaping @CordisActor (Value) throws -> Void) {
        self.delay = delay
        self.waiting = timer
        self.logger = logger
        self.callback = callback
    }

    /// Whether calls still run: false once disposed or once the fiber unloaded.
    public var isActive: Bool { !(handle?.isDisposed ?? true) }

    /// Restarts the wait with `value`: `callback(value)` runs `delay` from now unless another call comes
    /// first.
    public func callAsFunction(_ value: Value) {
        guard isActive else { return }
        waiting.schedule(after: delay) { [weak self] in
            guard let self, self.isActive else { return }
            self.waiting.id = nil
            do { try self.callback(value) } catch {
                self.logger.error("debounced callback of \(self.logger.name) failed: \(error)")
            }
        }
    }

    /// Stops the debounce: a waiting call is dropped and later calls do nothing.
    public func dispose() async {
        await handle?.revert()
    }

    func cancelWaiting() {
        waiting.cancel()
    }
}

extension Debounced where Value == Void {
    /// Calls the debounced function.
    public func callAsFunction() { callAsFunction(()) }
}
