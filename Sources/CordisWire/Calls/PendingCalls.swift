import CordisJSON
import Synchronization

/// The outbound calls of one link that wait for an answer: it issues their ids, matches `result` and
/// `error` replies to them, and bounds them in number and in time.
///
/// `call(_:timeout:send:)` registers a waiter, sends the `call` and suspends until one of these ends
/// it, whichever comes first:
/// - the peer's `result` or `error` with the call's id, handed over by the link's reader through
///   `receive(_:)`: the value, or a `RemoteCallError` with the reply's code;
/// - the timeout: `RemoteCallError` `timeout`, and a `cancel` is sent so the peer can drop the work;
/// - `cancel(_:)`, or the calling task's cancellation: `RemoteCallError` `cancelled` (a `CancellationError`
///   for a task cancellation), and a `cancel` is sent;
/// - `close(reason:)` when the link goes down: every waiter fails at once with `withdrawn`, and later
///   calls are refused with `withdrawn`.
///
/// When `maxPending` calls are waiting, a new one fails at once with `overloaded` without being sent.
///
/// Timeouts run on the `CallTimers` given at creation, normally the link's `EventLoop`. The table
/// keeps one timer, not one per call: each call records its deadline, and the timer is armed for the
/// earliest deadline of the calls waiting (moved earlier when a call with an earlier deadline starts).
/// When it fires it ends every call due by then and is armed again for the next deadline. A call that
/// ends before its deadline costs the timer nothing; the timer may fire once with nothing due, and is
/// then not armed again until a call waits. Thread-safe: the table is one mutex, never held while
/// sending, arming the timer or resuming a caller.
package final class PendingCalls: Sendable {
    /// The default bound on calls waiting for an answer on one link.
    package static let defaultMaxPending = 1024
    /// The default time a call waits for its answer (the contract's `--call-timeout` default).
    package static let defaultTimeout = Duration.seconds(30)

    /// A caller's wait: resumed with the outcome, which it throws once back on its executor. (A throwing
    /// continuation would throw straight out of the resumption, and Swift 6.3.1 then skips the hop back
    /// to a `nonisolated(nonsending)` caller's executor: swiftlang/swift#88259.)
    private typealias Waiting = UnsafeContinuation<Result<JSONDocument, any Error>, Never>

    private enum Waiter {
        /// Registered; the caller has not suspended yet.
        case reserved
        /// The caller waits. (An unsafe continuation, no checked one's allocation per call: it is
        /// resumed only by whoever takes this entry out of the table under the lock, so exactly once.)
        case waiting(Waiting)
        /// Ended before the caller suspended; it picks the outcome up.
        case finished(Result<JSONDocument, any Error>)
    }

    private struct Entry {
        var waiter: Waiter = .reserved
        /// When the call times out, and after how long; set when the caller starts waiting.
        var deadline: ContinuousClock.Instant?
        var timeout: Duration = .zero
        /// True once the `call` message is (being) sent, so that ending it early sends a `cancel`.
        var sent = false
        let send: @Sendable (WireMessage) throws -> Void
    }

    /// The table's one timer: the deadline it fires for, and its id once scheduled. `generation`
    /// names each arming, so a timer replaced by an earlier one finds it is stale when it fires.
    private struct Alarm {
        var deadline: ContinuousClock.Instant
        var generation: UInt64
        var timer: UInt64?
    }

    /// A timer to schedule after `delay` under `generation`, and the one it replaces, to cancel.
    private struct Arming {
        var delay: Duration
        var generation: UInt64
        var replaced: UInt64?
    }

    /// A call ended by its timeout, to fail outside the lock.
    private struct Expired {
        var id: Int
        var timeout: Duration
        var continuation: Waiting
        var cancel: (@Sendable (WireMessage) throws -> Void)?
    }

    private struct State {
        var nextID = 1
        var entries: [Int: Entry] = [:]
        var closed: RemoteCallError?
        /// Called once no call waits (see `whenEmpty(_:)`).
        var whenEmpty: (@Sendable () -> Void)?
        var alarm: Alarm?
        var generation: UInt64 = 0

        /// Arms the timer for `deadline` (it is `now` now) when none is armed or it is armed later;
        /// nil when the armed one already fires in time.
        mutating func arm(for deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Arming? {
            if let alarm, alarm.deadline <= deadline { return nil }
            generation += 1
            let replaced = alarm?.timer
            alarm = Alarm(deadline: deadline, generation: generation)
            return Arming(delay: now.duration(to: deadline), generation: generation, replaced: replaced)
        }

        /// Takes the waiting calls due by `due` out of the table; arms the timer again for the
        /// earliest deadline left.
        mutating func expire(dueBy due: ContinuousClock.Instant, now: ContinuousClock.Instant) -> ([Expired], Arming?) {
            alarm = nil
            var expired: [Expired] = []
            var next: ContinuousClock.Instant?
            for (id, entry) in entries {
                guard case .waiting(let continuation) = entry.waiter, let deadline = entry.deadline else { continue }
                if deadline <= due {
                    expired.append(Expired(
                        id: id, timeout: entry.timeout, continuation: continuation, cancel: entry.sent ? entry.send : nil))
                    entries[id] = nil
                } else if next.map({ deadline < $0 }) ?? true {
                    next = deadline
                }
            }
            return (expired.sorted { $0.id < $1.id }, next.flatMap { arm(for: $0, now: now) })
        }

        /// The `whenEmpty` body, taken, when no call waits any more.
        mutating func takeWhenEmpty() -> (@Sendable () -> Void)? {
            guard entries.isEmpty, let body = whenEmpty else { return nil }
            whenEmpty = nil
            return body
        }
    }

    /// How many calls may wait for an answer at once.
    package let maxPending: Int
    /// How long a call waits when `call` is given no timeout of its own.
    package let timeout: Duration
    private let timers: any CallTimers
    private let state = Mutex(State())

    /// An empty table.
    ///
    /// - Parameters:
    ///   - maxPending: the bound on calls waiting at once (at least 1).
    ///   - timeout: the default time a call waits for its answer.
    ///   - timers: where timeouts run: the link's `EventLoop`, or a scheduler a test fires by hand.
    package init(maxPending: Int = defaultMaxPending, timeout: Duration = defaultTimeout, timers: any CallTimers) {
        self.maxPending = max(1, maxPending)
        self.timeout = timeout
        self.timers = timers
    }

    /// The number of calls waiting for an answer.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Sends `request` as a `call` through `send` and returns the value of its `result`, as read (decode
    /// it with `JSONValueDecoder.decode(_:from:)`, or take its `value`).
    ///
    /// `send` is called once with the `call` (synchronously, before this suspends), and again with a
    /// `cancel` if the call times out or is cancelled after it was sent; it must not block (a link's
    /// `enqueue`). The table keeps it until the call ends.
    ///
    /// - Throws: `RemoteCallError` (`overloaded`, `withdrawn`, `timeout`, `cancelled`, or the code of the
    ///   peer's `error` reply), `CancellationError` when the calling task is cancelled, or whatever
    ///   `send` throws for the `call` (then nothing was sent).
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`): a caller on `CordisActor` stays
    /// there while it sends and when it is resumed, with no hop to the default pool and back.
    package nonisolated(nonsending) func call(
        _ request: CallRequest, timeout: Duration? = nil, send: @escaping @Sendable (WireMessage) throws -> Void
    ) async throws -> JSONDocument {
        let id = try reserveCall(send: send)
        return try await withTaskCancellationHandler {
            try await answer(to: id, request: request, timeout: timeout)
        } onCancel: {
            callerCancelled(id)
        }
    }

    // MARK: A call in steps

    // `call(_:timeout:send:)` in its three steps, for a caller that installs the cancellation handler
    // itself: the handler's operation is a closure, which Swift runs off the caller's actor unless it
    // is formed in code isolated to that actor; a node's session, on `CordisActor`, saves a hop off the
    // actor and back per call this way.

    /// Reserves an id for a call that `send` will send (see `call(_:timeout:send:)`).
    ///
    /// - Throws: `RemoteCallError` `overloaded` or `withdrawn`.
    package func reserveCall(send: @escaping @Sendable (WireMessage) throws -> Void) throws(RemoteCallError) -> Int {
        try reserve(send: send)
    }

    /// Sends call `id` (reserved by `reserveCall(send:)`) and waits for its answer; the caller wraps it
    /// in a cancellation handler that calls `callerCancelled(id)`.
    package nonisolated(nonsending) func answer(
        to id: Int, request: CallRequest, timeout: Duration? = nil
    ) async throws -> JSONDocument {
        let limit = timeout ?? self.timeout
        // Thrown after the resumption, not out of it: see `Waiting`.
        let outcome = await withUnsafeContinuation { continuation in
            start(id, request: request, timeout: limit, continuation: continuation)
        }
        return try outcome.get()
    }

    /// The task waiting for call `id` was cancelled: the call ends with `CancellationError`, and the
    /// peer is sent a `cancel` if the call went out.
    package func callerCancelled(_ id: Int) {
        finish(id, .failure(CancellationError()), tellPeer: true)
    }

    /// Hands over a message the link received; true when it is an answer to a call (`result`, or
    /// `error` with an id), which this table consumes, false for any other message.
    ///
    /// An answer whose id waits for nothing (it came after the call's timeout or cancellation, or the
    /// peer made it up) is dropped and still returns true.
    @discardableResult
    package func receive(_ message: WireMessage) -> Bool {
        switch message {
        case .result(let result):
            finish(result.id, .success(result.document), tellPeer: false)
            return true
        case .error(let reply):
            guard let id = reply.id else { return false }
            finish(id, .failure(RemoteCallError(reply)), tellPeer: false)
            return true
        default:
            return false
        }
    }

    /// Calls `body` once no call waits for an answer: at once, on the caller's thread, when none does;
    /// else on the thread that ends the last one (the link's loop thread for an answer), after its
    /// caller was resumed. Once: a body not called yet is replaced by the next one given.
    ///
    /// For a link that takes no new calls (one being drained), to learn when it is idle.
    package func whenEmpty(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> (@Sendable () -> Void)? in
            state.whenEmpty = body
            return state.takeWhenEmpty()
        }
        now?()
    }

    /// Gives up call `id`: its caller fails with `cancelled` and the peer is sent a `cancel`. False
    /// when no such call waits.
    @discardableResult
    package func cancel(_ id: Int) -> Bool {
        finish(id, .failure(RemoteCallError(.cancelled, "call \(id) was cancelled by its caller")), tellPeer: true)
    }

    /// Fails every waiting call with `withdrawn` at once, and refuses later calls the same way. Call it
    /// when the link closes; later calls to it change nothing.
    package func close(reason: String = "the link closed") {
        let failure = RemoteCallError(.withdrawn, "the provider went away: \(reason)")
        let (taken, closed, timer, emptied) = state.withLock {
            state -> ([Waiting], RemoteCallError, UInt64?, (@Sendable () -> Void)?) in
            let closed = state.closed ?? failure
            state.closed = closed
            let timer = state.alarm?.timer
            state.alarm = nil
            var taken: [Waiting] = []
            for (id, entry) in state.entries {
                switch entry.waiter {
                case .waiting(let continuation):
                    taken.append(continuation)
                    state.entries[id] = nil
                case .reserved:
                    state.entries[id]?.waiter = .finished(.failure(closed))
                case .finished:
                    break
                }
            }
            return (taken, closed, timer, state.takeWhenEmpty())
        }
        if let timer { timers.cancelTimer(timer) }
        for continuation in taken { continuation.resume(returning: .failure(closed)) }
        emptied?()
    }

    // MARK: Steps of a call

    private func reserve(send: @escaping @Sendable (WireMessage) throws -> Void) throws(RemoteCallError) -> Int {
        let maxPending = self.maxPending
        return try state.withLock { (state: inout State) throws(RemoteCallError) -> Int in
            if let closed = state.closed { throw closed }
            guard state.entries.count < maxPending else {
                throw RemoteCallError(
                    .overloaded,
                    "\(maxPending) calls already wait for an answer on this link; retry later or raise the bound")
            }
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(send: send)
            return id
        }
    }

    /// Makes the caller wait for call `id`, records its deadline (arming the timer when it is the
    /// earliest) and sends it.
    private func start(
        _ id: Int, request: CallRequest, timeout: Duration, continuation: Waiting
    ) {
        enum Step {
            case ended(Result<JSONDocument, any Error>, (@Sendable () -> Void)?)
            case send(@Sendable (WireMessage) throws -> Void, Arming?)
        }
        let now = ContinuousClock.now
        let deadline = now.advanced(by: timeout)
        let step = state.withLock { state -> Step in
            guard var entry = state.entries[id] else {
                return .ended(.failure(RemoteCallError(.withdrawn, "call \(id) was lost by the table")), nil)
            }
            if case .finished(let outcome) = entry.waiter {
                state.entries[id] = nil
                return .ended(outcome, state.takeWhenEmpty())
            }
            entry.waiter = .waiting(continuation)
            entry.sent = true
            entry.deadline = deadline
            entry.timeout = timeout
            state.entries[id] = entry
            return .send(entry.send, state.arm(for: deadline, now: now))
        }
        switch step {
        case .ended(let outcome, let emptied):
            continuation.resume(returning: outcome)
            emptied?()
        case .send(let send, let arming):
            schedule(arming)
            do {
                try send(.call(request.call(id: id)))
            } catch {
                finish(id, .failure(error), tellPeer: false)
            }
        }
    }

    /// Schedules the timer an arming asks for, and cancels the one it replaces.
    private func schedule(_ arming: Arming?) {
        guard let arming else { return }
        if let replaced = arming.replaced { timers.cancelTimer(replaced) }
        let generation = arming.generation
        let timer = timers.schedule(after: arming.delay) { [weak self] in
            self?.alarmFired(generation)
        }
        let current = state.withLock { state -> Bool in
            guard state.alarm?.generation == generation else { return false }
            state.alarm?.timer = timer
            return true
        }
        // Replaced by an earlier arming, or fired, before its id was recorded.
        if !current { timers.cancelTimer(timer) }
    }

    /// The timer fired: every call due by its deadline fails with `timeout`, and the peer is sent a
    /// `cancel` for each.
    private func alarmFired(_ generation: UInt64) {
        let now = ContinuousClock.now
        let taken = state.withLock { state -> ([Expired], Arming?, (@Sendable () -> Void)?)? in
            guard let alarm = state.alarm, alarm.generation == generation else { return nil }
            // Due by the deadline it was armed for, even if it fired early (a test's timers).
            let (expired, next) = state.expire(dueBy: max(alarm.deadline, now), now: now)
            return (expired, next, state.takeWhenEmpty())
        }
        guard let (expired, next, emptied) = taken else { return }
        schedule(next)
        for call in expired {
            if let cancel = call.cancel { try? cancel(.cancel(id: call.id)) }
            call.continuation.resume(
                returning: .failure(RemoteCallError(.timeout, "call \(call.id) got no answer within \(call.timeout)")))
        }
        emptied?()
    }

    /// Ends call `id` with `outcome` (sending a `cancel` first when `tellPeer` and it was sent); false
    /// when no such call is waiting.
    @discardableResult
    private func finish(_ id: Int, _ outcome: Result<JSONDocument, any Error>, tellPeer: Bool) -> Bool {
        typealias Taken = (
            Waiting?, (@Sendable (WireMessage) throws -> Void)?,
            (@Sendable () -> Void)?
        )
        let taken = state.withLock { state -> Taken? in
            guard let entry = state.entries[id] else { return nil }
            switch entry.waiter {
            case .reserved:
                state.entries[id]?.waiter = .finished(outcome)
                return (nil, nil, nil)
            case .finished:
                return nil
            case .waiting(let continuation):
                state.entries[id] = nil
                return (continuation, tellPeer && entry.sent ? entry.send : nil, state.takeWhenEmpty())
            }
        }
        guard let (continuation, send, emptied) = taken else { return false }
        if let send { try? send(.cancel(id: id)) }
        continuation?.resume(returning: outcome)
        emptied?()
        return true
    }
}
