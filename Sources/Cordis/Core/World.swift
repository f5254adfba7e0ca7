/// What a tree of contexts shares: the service registry, the event bus, the log hub, and the count of
/// fibers with a transition in flight.
@CordisActor
final class World {
    let events: EventBus
    let registry: ServiceRegistry
    let logs: LogHub
    /// The clock the world's own waits run on (a fiber's retry after a withdrawn load, the timers).
    let clock: any Clock<Duration>
    /// The same clock, as the timers use it.
    let timerClock: TimerClock
    /// The pending timers of `ctx.timeout`, `sleep`, `interval`, `throttle` and `debounce`.
    let timers: TimerQueue
    /// Every fiber of the world not yet disposed, by id.
    private(set) var fibers = OrderedFibers()
    /// The fibers whose plugin declares it provides a service (`Plugin.provides`), by service name: the
    /// would-be providers the search for dependency cycles follows.
    var declaredProviders: [String: OrderedFibers] = [:]
    /// The dependency cycle last logged for each fiber waiting for one, by fiber id (kept here, not in
    /// every fiber: few fibers ever wait for a cycle).
    var reportedCycles: [Int: [String]] = [:]
    private var nextFiberID = 0
    private var nextRealmID: UInt64 = 0
    private var drivers = 0
    private var quiescenceWaiters: [CheckedContinuation<Void, Never>] = []
    /// Fibers whose driver starts at the run queue's next turn, in the order they were scheduled.
    private var runQueue: [Fiber] = []
    /// Whether a turn of the run queue is queued on the actor.
    private var turnQueued = false

    init(logs: LogHub, clock: any Clock<Duration>) {
        self.logs = logs
        self.clock = clock
        self.timerClock = TimerClock(clock)
        self.timers = TimerQueue(clock: timerClock)
        let events = EventBus()
        let registry = ServiceRegistry(events: events)
        self.events = events
        self.registry = registry
        events.serviceValue = { [unowned registry] slot in registry.current(slot)?.value }
    }

    func makeFiberID() -> Int {
        defer { nextFiberID += 1 }
        return nextFiberID
    }

    /// The id of the newest fiber made (0, the root's, before any other).
    var lastFiberID: Int { max(nextFiberID - 1, 0) }

    func makeRealmID() -> UInt64 {
        nextRealmID += 1
        return nextRealmID
    }

    func remember(_ fiber: Fiber) {
        fibers.insert(fiber)
        declareProvisions(of: fiber)
    }

    /// Forgets a fiber that is gone: the services it declared and the cycle logged for it.
    func forget(_ fiber: Fiber) {
        fibers.remove(id: fiber.id)
        forgetProvisions(of: fiber)
        forgetReportedCycle(of: fiber)
    }

    /// Forgets the cycle logged for `fiber`, if any (it stopped waiting, or is gone).
    func forgetReportedCycle(of fiber: Fiber) {
        if !reportedCycles.isEmpty { reportedCycles[fiber.id] = nil }
    }

    /// Records the services `fiber`'s plugin declares it provides, for the cycle search.
    func declareProvisions(of fiber: Fiber) {
        for service in fiber.runner.provides {
            declaredProviders[service, default: OrderedFibers()].insert(fiber)
        }
    }

    /// Forgets what `declareProvisions(of:)` recorded.
    func forgetProvisions(of fiber: Fiber) {
        for service in fiber.runner.provides {
            declaredProviders[service]?.remove(id: fiber.id)
            if declaredProviders[service]?.isEmpty == true { declaredProviders[service] = nil }
        }
    }

    func driverFinished() {
        drivers -= 1
        guard drivers == 0 else { return }
        let waiters = quiescenceWaiters
        quiescenceWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Starts `fiber`'s driver at the run queue's next turn: a job of its own on `CordisActor`, after the
    /// code that scheduled it. Drivers start in the order their fibers were scheduled, and each counts as
    /// a transition in flight from now until it calls `driverFinished()`.
    func startDriver(of fiber: Fiber) {
        drivers += 1
        runQueue.append(fiber)
        guard !turnQueued else { return }
        turnQueued = true
        Task { self.runTurn() }
    }

    /// One turn of the run queue: starts the driver of every fiber queued before the turn began, one
    /// after the other, each as a task that runs here at once until it first suspends. A driver that
    /// ends without suspending (the usual case) has ended, and freed its task, before the next starts,
    /// so a burst of schedules (a provider returning to 100,000 consumers) never holds a task per fiber
    /// at once. Fibers scheduled during the turn wait for the next one, queued on the actor behind the
    /// jobs already waiting for it.
    private func runTurn() {
        let batch = runQueue
        runQueue = []
        turnQueued = false
        // Bounded: the batch is fixed when the turn begins.
        for fiber in batch {
            _ = Task.immediate { await fiber.drive() }
        }
    }

    /// Whether no fiber has a transition in flight or scheduled.
    var isQuiescent: Bool { drivers == 0 }

    /// Waits until no fiber of this world has a transition in flight.
    func quiescence() async {
        // Bounded: each pass waits for the driver count to reach zero; a new driver can only start from
        // work done on this actor, so the loop ends once the world is idle.
        while drivers > 0 {
            await withCheckedContinuation { quiescenceWaiters.append($0) }
        }
    }

    func logger(for fiber: Fiber) -> Logger {
        Logger(name: fiber.name, hub: logs, fiberID: fiber.id, fields: fiber.logFields)
    }
}
