import CCordisShim
@_spi(CordisRuntime) import CordisCalls
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread that waits on epoll and does all socket I/O of its listeners and connections.
///
/// Reads, frame splitting, frame filters (heartbeats) and timers run on the loop thread, never on an
/// actor; callers on any thread may send, and a send whose bytes fit in the socket is written at once
/// from the caller's thread. Other threads wake the loop through an eventfd. Create one per node and
/// call `shutdown()` when done; every connection and listener of a stopped loop is closed.
///
/// The loop is also a `TaskExecutor` (see `enqueue(_:)`): tasks that prefer it run their jobs on the
/// loop thread between its turns. Such a job may block (a plugin keeping `CordisActor` busy): when one
/// holds the thread longer than `takeover`, a standby thread takes the loop over and runs its turns,
/// so sockets, heartbeat answers and timers go on; the blocked thread becomes the standby once its job
/// returns. The standby thread starts with the first task job and sleeps while no task job runs.
public final class EventLoop: Sendable {
    /// Queued work: the loop's own (never blocks; may touch loop-only state) or a task's job (may
    /// block; the loop is taken over when it does).
    private enum Job {
        case loop(@Sendable () -> Void)
        case task(UnownedJob)
    }

    /// The task job the driver is running: which one, and since when.
    private struct TaskJobMark {
        var serial: UInt64
        var since: ContinuousClock.Instant
    }

    private enum Standby {
        /// Not started: no task job ran yet.
        case none
        /// Checking every half `takeover` whether the driver is stuck in a task job.
        case watching
        /// Asleep until the next task job (no task job for about a second).
        case parked
    }

    private struct State {
        var handlers: [UInt64: any LoopHandler] = [:]
        var nextToken: UInt64 = 1
        /// Jobs in order; those before `jobHead` already ran.
        var jobs: [Job] = []
        var jobHead = 0
        var timers = TimerHeap<ContinuousClock.Instant, @Sendable () -> Void>()
        var wakePending = false
        /// While the loop blocks in epoll: the deadline it wakes up at by itself (nil: none).
        var blockedUntil: ContinuousClock.Instant??
        /// How many times another thread woke the loop (the eventfd written).
        var wakeups = 0
        var stopping = false
        var stopped = false
        /// The thread running the loop's turns; another one takes over when this one is held by a
        /// task's job longer than `takeover`.
        var driver: pthread_t?
        /// While the driver runs a task's job.
        var taskJob: TaskJobMark?
        var taskJobSerial: UInt64 = 0
        var standby = Standby.none
        var takeovers = 0
        var finished: [CheckedContinuation<Void, Never>] = []
        /// The loop's threads (the driver, and the standby once one started), joined at shutdown.
        var threads: [pthread_t] = []
        /// Who joins the threads at shutdown, and who waits for that.
        var reaping = Reaping.notStarted
        /// Connections whose writes the driver deferred to the end of its turn (see `deferWrite(of:)`).
        var deferredWriters: [any DeferredWriter] = []
        /// Connections the driver wrote to at once in this turn (their first write of the turn).
        var wroteThisTurn: [ObjectIdentifier] = []

        var hasJobs: Bool { jobHead < jobs.count }

        func isDriver(_ thread: pthread_t) -> Bool {
            guard let driver else { return false }
            return pthread_equal(driver, thread) != 0
        }
    }

    private enum Role {
        case drive, watch, exit
    }

    /// The joining of the loop's threads: the first `shutdown()` call joins them once the loop stopped;
    /// later calls wait until it has.
    private enum Reaping {
        case notStarted
        case joining(waiters: [CheckedContinuation<Void, Never>])
        case done
    }

    private static let noJob: @Sendable () -> Void = {}

    private static let wakeToken: UInt64 = 0

    let epollFD: Int32
    private let wakeFD: Int32
    /// Whether `epollFD` and `wakeFD` are still open: every use from another thread holds this lock,
    /// so none reaches a closed descriptor whose number another file took meanwhile (a wake-up written
    /// into someone's file, or another loop's epoll changed).
    private let descriptorsOpen = Mutex(true)
    private let state = Mutex(State())
    private let observer: (@Sendable (TransportEvent) -> Void)?
    private let spin: Duration
    private let batchesWrites: Bool
    private let takeover: Duration
    private let name: String
    /// Wakes a parked standby thread (and a watching one at shutdown).
    private let standbySignal = DispatchSemaphore(value: 0)
    /// The end of each turn, for tests that await the changes the loop makes.
    package let turns = LoopTurns()

    /// Starts a loop thread.
    ///
    /// - Parameters:
    ///   - observer: receives transport events (refused peers, closed connections and why); it runs on
    ///     the loop thread and must not block.
    ///   - spin: how long the loop polls without sleeping after it handled events, before it blocks in
    ///     epoll; a short spin saves the wake-up of an idle CPU on a busy link at the price of CPU time
    ///     (it yields the CPU between polls). `defaultSpin` unless given.
    ///   - name: the loop thread's name.
    ///   - takeover: how long a task's job may hold the loop thread before a standby thread takes the
    ///     loop over (1 ms to 10 s; `defaultTakeover` unless given).
    ///   - batchesWrites: whether a write made by the loop's own thread during a turn waits for the end
    ///     of the turn, so the turn's writes to one socket go out in one system call
    ///     (`defaultBatchesWrites` unless given).
    /// - Throws: `TransportError` with code `systemError` when epoll, the eventfd or the loop's thread
    ///   cannot be created.
    public init(
        observer: (@Sendable (TransportEvent) -> Void)? = nil, spin: Duration = EventLoop.defaultSpin,
        name: String = "cordis-io", takeover: Duration = EventLoop.defaultTakeover,
        batchesWrites: Bool = EventLoop.defaultBatchesWrites
    ) throws {
        let epollFD = ccordis_epoll_create()
        guard epollFD >= 0 else { throw TransportError.system(.systemError, "cannot create epoll instance") }
        let wakeFD = ccordis_eventfd_create()
        guard wakeFD >= 0 else {
            let error = TransportError.system(.systemError, "cannot create eventfd")
            close(epollFD)
            throw error
        }
        guard ccordis_epoll_add(epollFD, wakeFD, CCORDIS_EVENT_READ, Self.wakeToken) == 0 else {
            let error = TransportError.system(.systemError, "cannot watch eventfd")
            close(epollFD)
            close(wakeFD)
            throw error
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        self.observer = observer
        self.spin = spin
        self.batchesWrites = batchesWrites
        self.takeover = min(max(takeover, .milliseconds(1)), .seconds(10))
        self.name = name
        let started = LoopThread.start(name: name) { [self] in
            state.withLock { $0.driver = pthread_self() }
            self.threadMain()
        }
        switch started {
        case .success(let thread):
            state.withLock { $0.threads.append(thread) }
        case .failure(let error):
            close(epollFD)
            close(wakeFD)
            throw TransportError.system(.systemError, "cannot start the event loop's thread", errno: error.number)
        }
    }

    /// Stops the loop: closes every listener and connection, then ends the loop's threads, and returns
    /// once they have ended (each joined, for at most 2 s), so a program may exit right after it without
    /// its exit handlers racing a loop thread's own ending. Idempotent: every call returns after that.
    public func shutdown() async {
        let joins = state.withLock { state -> Bool? in
            state.stopping = true
            switch state.reaping {
            case .notStarted:
                state.reaping = .joining(waiters: [])
                return true
            case .joining:
                return false
            case .done:
                return nil
            }
        }
        guard let joins else { return }
        guard joins else {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .joining(var waiters) = state.reaping else { return true }
                    waiters.append(continuation)
                    state.reaping = .joining(waiters: waiters)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return
        }
        wake()
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.stopped { return true }
                state.finished.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        // Stopped: each thread leaves its last turn at once. A task job resumed here runs on Swift's
        // default executor (the loop takes none once stopped), so this is not one of them.
        let threads = state.withLock { state in
            defer { state.threads.removeAll() }
            return state.threads
        }
        let current = pthread_self()
        for thread in threads where pthread_equal(thread, current) == 0 {
            _ = LoopThread.join(thread, withinMilliseconds: 2_000)
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.reaping = .done }
            guard case .joining(let waiters) = state.reaping else { return [] }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// True when the caller is the loop's own code on the loop thread: an event handler, a job given
    /// to `execute(_:)`, a timer. False on every other thread and in a task's job run by the loop
    /// (another thread may take the loop over while such a job runs, so it must hand loop work to
    /// `execute(_:)`).
    package var inLoopThread: Bool {
        let current = pthread_self()
        return state.withLock { $0.isDriver(current) && $0.taskJob == nil }
    }

    /// Runs `job` on the loop thread, after the events being handled.
    package func execute(_ job: @escaping @Sendable () -> Void) {
        enqueueJob(.loop(job))
    }

    /// Runs a task's job on the loop thread (see `enqueue(_:)`); on Swift's default executor once the
    /// loop has stopped.
    ///
    /// A task keeps preferring the loop after it stopped (a link's reader, a task it started, the
    /// actor such a task holds): a job it queued then must still run, or the task, and any actor
    /// scheduled on it, would wait for ever.
    func enqueueTaskJob(_ job: UnownedJob) {
        if !enqueueJob(.task(job), unlessStopped: true) { globalConcurrentExecutor.enqueue(job) }
    }

    private func enqueueJob(_ job: Job) {
        enqueueJob(job, unlessStopped: false)
    }

    /// Queues `job` and wakes the loop unless the caller is the loop or a wake-up is on its way. With
    /// `unlessStopped`, queues nothing and returns false once the loop has stopped.
    @discardableResult
    private func enqueueJob(_ job: Job, unlessStopped: Bool) -> Bool {
        let current = pthread_self()
        let (queued, mustWake) = state.withLock { state -> (Bool, Bool) in
            if unlessStopped && state.stopped { return (false, false) }
            state.jobs.append(job)
            // The loop runs its queue dry before it sleeps: no wake-up needed from its own thread.
            if state.isDriver(current) { return (true, false) }
            defer { state.wakePending = true }
            return (true, !state.wakePending)
        }
        if mustWake { wake() }
        return queued
    }

    /// How long a task's job may hold the loop thread before another thread takes the loop over when
    /// none is given: 50 ms (heartbeats are answered at most that late while a plugin blocks).
    public static let defaultTakeover: Duration = .milliseconds(50)

    /// How many times a standby thread took the loop over from a blocked task job (for tests).
    package var takeovers: Int { state.withLock { $0.takeovers } }

    /// The spin of a loop created without one: `CORDIS_LOOP_SPIN_US` microseconds (0 to 10,000) when
    /// set; else 100 µs when the creating thread may run on two CPUs or more, 20 µs when on one.
    ///
    /// A node reads, serves and resumes its callers on the loop thread, so the next event of a busy
    /// link (the answer to a call just sent, the next call of a peer) usually comes within a round
    /// trip, about 100 µs: polling that long saves the wake-up of a sleeping thread on an idle CPU,
    /// which costs tens to hundreds of microseconds on a virtual machine. On one CPU the peer cannot
    /// make progress while the loop polls, so a short poll only saves the sleep in epoll. The price is
    /// CPU time: up to the spin for each burst of events on a node with nothing else to do (an idle
    /// loop does not spin). `docs/performance.md` has the measurements.
    public static var defaultSpin: Duration {
        spinFromEnvironment ?? (ccordis_allowed_cpus() >= 2 ? .microseconds(100) : .microseconds(20))
    }

    private static let spinFromEnvironment: Duration? = {
        guard let text = ProcessInfo.processInfo.environment["CORDIS_LOOP_SPIN_US"], let value = Int(text) else { return nil }
        return .microseconds(max(0, min(value, 10_000)))
    }()

    /// Whether loops batch their own writes unless told otherwise: yes, unless `CORDIS_LOOP_BATCH_WRITES`
    /// is `0`.
    ///
    /// A node answers the calls it read in one turn, and resumes the callers whose answers it read,
    /// on the loop thread: with many calls in flight a turn writes dozens of frames to the same
    /// socket. Batched, the first goes at once and the rest leave in one `send` at the end of the turn
    /// (the turn's other work first, then the writes, before the loop polls or sleeps); a turn with
    /// one write sends it as before. Writes from other threads are never held.
    public static var defaultBatchesWrites: Bool { batchesWritesFromEnvironment ?? true }

    private static let batchesWritesFromEnvironment: Bool? = {
        guard let text = ProcessInfo.processInfo.environment["CORDIS_LOOP_BATCH_WRITES"] else { return nil }
        return text != "0"
    }()

    /// Defers `writer`'s write to the end of the current turn when the caller is the thread running
    /// the loop's turns (its own code or a task's job on it), the loop batches writes, and `writer`
    /// was written to already in this turn: true when deferred, and the loop then calls
    /// `writeDeferred()` before it next polls. False otherwise: the caller writes now. (The first
    /// write of a turn goes at once, so a lone message waits for nothing and the peer can start on
    /// it while this side goes on with the turn.)
    ///
    /// The check and the deferral are one step under the loop's lock, as is a takeover: a write
    /// deferred by the driver is written by whichever thread drives the loop next, before it polls.
    func deferWrite(of writer: any DeferredWriter) -> Bool {
        guard batchesWrites else { return false }
        let current = pthread_self()
        let identifier = ObjectIdentifier(writer)
        return state.withLock { state -> Bool in
            guard state.isDriver(current), !state.stopping else { return false }
            guard state.wroteThisTurn.contains(identifier) else {
                state.wroteThisTurn.append(identifier)
                return false
            }
            state.deferredWriters.append(writer)
            return true
        }
    }

    /// Writes what this turn deferred, and starts the next turn's count (driver only).
    private func writeDeferred() {
        let writers = state.withLock { state -> [any DeferredWriter] in
            state.wroteThisTurn.removeAll(keepingCapacity: true)
            guard !state.deferredWriters.isEmpty else { return [] }
            defer { state.deferredWriters.removeAll(keepingCapacity: true) }
            return state.deferredWriters
        }
        for writer in writers { writer.writeDeferred() }
    }

    /// The longest delay a timer waits: a longer one (a peer's absurd timeout) waits this long, about
    /// 136 years, which no process outlives.
    package static let maximumDelay = Duration.seconds(Int64(UInt32.max))

    /// Runs `job` on the loop thread after `delay`; returns an id for `cancelTimer(_:)`.
    ///
    /// A delay longer than `maximumDelay` waits `maximumDelay`; a negative one runs the job at once.
    @discardableResult
    package func schedule(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = ContinuousClock.now.advanced(by: min(delay, Self.maximumDelay))
        let (id, mustWake) = state.withLock { state -> (UInt64, Bool) in
            let id = state.timers.insert(deadline: deadline, job: job)
            // A running loop looks at the timers before it blocks again, and a blocked one only needs
            // waking for a deadline earlier than the one it sleeps to (a call's timeout rarely is).
            guard case .some(let until) = state.blockedUntil, !state.wakePending else { return (id, false) }
            if let until, until <= deadline { return (id, false) }
            state.wakePending = true
            return (id, true)
        }
        if mustWake { wake() }
        return id
    }

    /// Cancels a timer that has not fired; nothing happens when it already ran.
    package func cancelTimer(_ id: UInt64) {
        _ = state.withLock { $0.timers.remove(id: id) }
    }

    /// Reports an event to the observer.
    func report(_ event: TransportEvent) {
        observer?(event)
    }

    /// A fresh token that names a handler in epoll.
    func allocateToken() -> UInt64 {
        state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
    }

    /// Watches `fd` for `events` on behalf of `handler`.
    func register(token: UInt64, fd: Int32, events: UInt32, handler: any LoopHandler) throws {
        let stopping = state.withLock { state -> Bool in
            guard !state.stopping else { return true }
            state.handlers[token] = handler
            return false
        }
        guard !stopping else { throw TransportError(.closed, "the event loop is shutting down") }
        guard withDescriptors({ ccordis_epoll_add($0, fd, events, token) }) == 0 else {
            let error = TransportError.system(.systemError, "cannot watch socket \(fd)")
            _ = state.withLock { $0.handlers.removeValue(forKey: token) }
            throw error
        }
    }

    /// Changes what `fd` is watched for; false when epoll refused (the fd is not registered).
    @discardableResult
    func modify(token: UInt64, fd: Int32, events: UInt32) -> Bool {
        withDescriptors { ccordis_epoll_modify($0, fd, events, token) } == 0
    }

    /// Watches `fd` again after `unwatch(fd:)`.
    @discardableResult
    func rewatch(token: UInt64, fd: Int32, events: UInt32) -> Bool {
        withDescriptors { ccordis_epoll_add($0, fd, events, token) } == 0
    }

    /// Stops watching `fd` but keeps the handler registered.
    func unwatch(fd: Int32) {
        _ = withDescriptors { ccordis_epoll_remove($0, fd) }
    }

    /// Stops watching `fd` and forgets its handler. Call before closing the descriptor.
    func deregister(token: UInt64, fd: Int32) {
        _ = withDescriptors { ccordis_epoll_remove($0, fd) }
        _ = state.withLock { $0.handlers.removeValue(forKey: token) }
    }

    private func wake() {
        let open = descriptorsOpen.withLock { open in
            if open { _ = ccordis_eventfd_signal(wakeFD) }
            return open
        }
        if open { state.withLock { $0.wakeups += 1 } }
    }

    /// Runs `body` with the epoll descriptor while it is open; -1 (as a failed call) after shutdown.
    private func withDescriptors(_ body: (Int32) -> Int32) -> Int32 {
        descriptorsOpen.withLock { open in open ? body(epollFD) : -1 }
    }

    /// How many times other threads woke the loop so far (for tests of the wake-ups saved).
    package var wakeups: Int { state.withLock { $0.wakeups } }

    /// A loop thread: runs the loop's turns while it is the driver, watches the driver while not.
    private func threadMain() {
        let capacity = 64
        let events = UnsafeMutablePointer<ccordis_event>.allocate(capacity: capacity)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer {
            events.deallocate()
            scratch.deallocate()
        }
        let current = pthread_self()
        while true {
            let role = state.withLock { state -> Role in
                if state.stopped { return .exit }
                return state.isDriver(current) ? .drive : .watch
            }
            switch role {
            case .exit: return
            case .drive: drive(events: events, capacity: capacity, scratch: scratch)
            case .watch: watch()
            }
        }
    }

    /// The next queued job; a task's job is marked as running (and wakes the standby thread).
    private func nextJob() -> (Job, UInt64)? {
        let (next, startStandby, signalStandby) = state.withLock { state -> ((Job, UInt64)?, Bool, Bool) in
            state.wakePending = false
            guard state.hasJobs else { return (nil, false, false) }
            let job = state.jobs[state.jobHead]
            state.jobs[state.jobHead] = .loop(Self.noJob)
            state.jobHead += 1
            if !state.hasJobs {
                state.jobs.removeAll(keepingCapacity: true)
                state.jobHead = 0
            }
            guard case .task = job else { return ((job, 0), false, false) }
            state.taskJobSerial += 1
            state.taskJob = TaskJobMark(serial: state.taskJobSerial, since: ContinuousClock.now)
            switch state.standby {
            case .none:
                state.standby = .watching
                return ((job, state.taskJobSerial), true, false)
            case .parked:
                state.standby = .watching
                return ((job, state.taskJobSerial), false, true)
            case .watching:
                return ((job, state.taskJobSerial), false, false)
            }
        }
        if startStandby {
            switch LoopThread.start(name: name + "-standby", { [self] in self.threadMain() }) {
            case .success(let thread):
                // Recorded before the job runs, so before any stop: shutdown joins it.
                state.withLock { $0.threads.append(thread) }
            case .failure:
                // No thread to spare: the loop runs on without a standby (a task job that holds it then
                // delays the loop's own work), and the next task job tries again.
                state.withLock { if $0.standby == .watching { $0.standby = .none } }
            }
        }
        if signalStandby { standbySignal.signal() }
        return next
    }

    /// Runs the loop's turns until the loop stops or another thread took it over.
    private func drive(events: UnsafeMutablePointer<ccordis_event>, capacity: Int, scratch: UnsafeMutableRawBufferPointer) {
        let current = pthread_self()
        var spinUntil: ContinuousClock.Instant?
        var jobsLeft = false
        while true {
            // What the last turn deferred goes out before the loop polls, spins or sleeps (and, after a
            // takeover, what the thread that drove before deferred).
            writeDeferred()
            var timeout = nextTimeout(blocking: !jobsLeft)
            if jobsLeft { timeout = 0 }
            if let until = spinUntil {
                if ContinuousClock.now <= until {
                    timeout = 0
                    // Polling: let another thread on this CPU (the peer, the actor's thread) run first.
                    sched_yield()
                } else {
                    spinUntil = nil
                }
            }
            if timeout == 0 { state.withLock { $0.blockedUntil = nil } }
            let count = Int(ccordis_epoll_wait(epollFD, events, Int32(capacity), timeout))
            state.withLock { $0.blockedUntil = nil }
            var handledAny = false
            for index in 0..<max(0, count) {
                let event = events[index]
                if event.token == Self.wakeToken {
                    ccordis_eventfd_drain(wakeFD)
                    continue
                }
                handledAny = true
                let handler = state.withLock { $0.handlers[event.token] }
                handler?.handle(events: event.events, scratch: scratch)
            }
            var ranJobs = false
            // Jobs may queue more jobs (a resumed task's next step): run them until none is left,
            // a bounded number so events are not starved.
            for _ in 0..<1024 {
                guard let next = nextJob() else { break }
                let (job, serial) = next
                ranJobs = true
                switch job {
                case .loop(let body):
                    body()
                case .task(let taskJob):
                    taskJob.runSynchronously(on: asUnownedTaskExecutor())
                    let stillDriving = state.withLock { state -> Bool in
                        if state.taskJob?.serial == serial { state.taskJob = nil }
                        return state.isDriver(current)
                    }
                    // Held too long: the standby thread runs the loop now, this one becomes the standby.
                    if !stillDriving { return }
                }
            }
            runDueTimers()
            turns.finished()
            let (stopping, left) = state.withLock { ($0.stopping, $0.hasJobs) }
            if stopping {
                writeDeferred()
                break
            }
            // Jobs left after the bounded rounds: poll once more instead of blocking.
            jobsLeft = left
            if spin > .zero && (handledAny || ranJobs) {
                spinUntil = ContinuousClock.now.advanced(by: spin)
            }
        }
        let (handlers, finished) = state.withLock { state in
            let handlers = Array(state.handlers.values)
            state.handlers.removeAll()
            state.timers.removeAll()
            state.stopped = true
            let finished = state.finished
            state.finished.removeAll()
            return (handlers, finished)
        }
        standbySignal.signal()
        for handler in handlers { handler.loopStopped() }
        // Jobs queued by the handlers while closing (stream ends, close callbacks) still run.
        let jobs = state.withLock { state in
            defer {
                state.jobs.removeAll()
                state.jobHead = 0
            }
            return Array(state.jobs[state.jobHead...])
        }
        for job in jobs {
            switch job {
            case .loop(let body): body()
            case .task(let taskJob): taskJob.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        descriptorsOpen.withLock { open in
            open = false
            close(wakeFD)
            close(epollFD)
        }
        turns.stopped()
        for continuation in finished { continuation.resume() }
    }

    /// The standby thread: every half `takeover` it looks whether the driver has been running the same
    /// task job for longer than `takeover`, and takes the loop over if so. Asleep while no task job ran
    /// for about a second. Returns when it took over or the loop stopped.
    private func watch() {
        let current = pthread_self()
        let interval = takeover / 2
        let (seconds, attoseconds) = interval.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        let quietChecksBeforeParking = max(2, 1_000_000_000 / max(1, nanoseconds))
        var quietChecks = 0
        var lastSerial = state.withLock { $0.taskJobSerial }
        while true {
            let park = state.withLock { state -> Bool? in
                if state.stopped { return nil }
                guard quietChecks >= quietChecksBeforeParking, state.taskJob == nil, !state.stopping else { return false }
                state.standby = .parked
                return true
            }
            guard let park else { return }
            if park {
                standbySignal.wait()
                quietChecks = 0
            } else {
                _ = standbySignal.wait(timeout: .now() + .nanoseconds(nanoseconds))
            }
            let now = ContinuousClock.now
            let tookOver = state.withLock { state -> Bool? in
                if state.stopped { return nil }
                if let mark = state.taskJob, mark.since.duration(to: now) >= takeover {
                    state.driver = current
                    state.taskJob = nil
                    state.takeovers += 1
                    return true
                }
                if state.taskJobSerial == lastSerial && state.taskJob == nil {
                    quietChecks += 1
                } else {
                    quietChecks = 0
                }
                lastSerial = state.taskJobSerial
                return false
            }
            guard let tookOver else { return }
            if tookOver { return }
        }
    }

    /// Milliseconds until the earliest timer, or -1 when there is none. With `blocking`, records that
    /// the loop is about to block until then (a timer scheduled meanwhile wakes it only if earlier).
    private func nextTimeout(blocking: Bool = false) -> Int32 {
        let earliest = state.withLock { state -> ContinuousClock.Instant? in
            let earliest = state.timers.earliestDeadline()
            // Jobs queued (by this thread) or a wake-up on its way: the loop does not block.
            if blocking && !state.hasJobs { state.blockedUntil = .some(earliest) }
            return earliest
        }
        guard let earliest else { return -1 }
        let remaining = ContinuousClock.now.duration(to: earliest)
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        // epoll takes at most Int32.max milliseconds (24 days): a later timer is looked at again then.
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    private func runDueTimers() {
        let now = ContinuousClock.now
        let due = state.withLock { $0.timers.takeDue(at: now) }
        for job in due { job() }
    }
}
