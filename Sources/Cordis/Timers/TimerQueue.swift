@_spi(CordisRuntime) import CordisCalls

/// The pending timers of one world, in deadline order, behind a single wait on the world's clock: a
/// timer costs a slot in a `TimerHeap`, not a task, and cancelling one (as every unloading fiber does
/// for its timers) only empties its slot. The wait is re-armed when an earlier deadline arrives and
/// dropped when no timer is left.
@CordisActor
final class TimerQueue {
    private let clock: TimerClock
    private var timers = TimerHeap<Duration, @CordisActor () -> Void>()
    private var driver: Task<Void, Never>?
    /// The deadline the driver waits for, nil when none waits.
    private var armedFor: Duration?
    /// Tells the current driver from one replaced while its wait was ending.
    private var generation = 0

    init(clock: TimerClock) {
        self.clock = clock
    }

    /// How many timers are pending.
    var count: Int { timers.count }

    /// Runs `action` once `delay` has passed, unless `cancel` is called first; returns the timer's id.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @CordisActor () -> Void) -> UInt64 {
        let deadline = clock.elapsed() + delay
        let id = timers.insert(deadline: deadline, job: action)
        if armedFor.map({ deadline < $0 }) ?? true { arm() }
        return id
    }

    /// Forgets timer `id`; it never runs. Cancelling twice, or a timer that ran, does nothing.
    func cancel(_ id: UInt64) {
        guard timers.remove(id: id) != nil, timers.isEmpty else { return }
        timers.removeAll()
        disarm()
    }

    private func disarm() {
        generation &+= 1
        driver?.cancel()
        driver = nil
        armedFor = nil
    }

    /// Waits for the earliest live deadline (replacing the current wait).
    private func arm() {
        disarm()
        guard let deadline = timers.earliestDeadline() else { return }
        armedFor = deadline
        let wait = deadline - clock.elapsed()
        let clock = self.clock
        let generation = self.generation
        driver = Task { [weak self] in
            if wait > .zero {
                do { try await clock.sleep(wait) } catch { return }
            }
            self?.fireDue(generation)
        }
    }

    /// Runs every timer whose deadline has passed, in deadline order, then waits for the next. A timer
    /// cancelled by an earlier one in the same turn does not run.
    private func fireDue(_ generation: Int) {
        guard generation == self.generation else { return }
        driver = nil
        armedFor = nil
        let now = clock.elapsed()
        // Bounded by the heap: each pass takes one timer.
        while let action = timers.popDue(at: now) { action() }
        if armedFor == nil { arm() }
    }
}
