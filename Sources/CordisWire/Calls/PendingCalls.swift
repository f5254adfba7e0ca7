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
/// Timeouts run on the `CallTimers` given at creation, normally the link's `EventLoop`
/// (`schedule(after:)`, so a timeout costs a timer entry, not a task). Thread-safe: the table is one
/// mutex, never held while sending or resuming a caller.
public final class PendingCalls: Sendable {
    /// The default bound on calls waiting for an answer on one link.
    public static let defaultMaxPending = 1024
    /// The default time a call waits for its answer (the contract's `--call-timeout` default).
    public static let defaultTimeout = Duration.seconds(30)

    private enum Waiter {
        /// Registered; the caller has not suspended yet.
        case reserved
        /// The caller waits.
        case waiting(CheckedContinuation<JSONValue, any Error>)
        /// Ended before the caller suspended; it picks the outcome up.
        case finished(Result<JSONValue, any Error>)
    }

    private struct Entry {
        var waiter: Waiter = .reserved
        var timer: UInt64?
        /// True once the `call` message is (being) sent, so that ending it early sends a `cancel`.
        var sent = false
        let send: @Sendable (WireMessage) throws -> Void
    }

    private struct State {
        var nextID = 1
        var entries: [Int: Entry] = [:]
        var closed: RemoteCallError?
        /// Called once no call waits (see `whenEmpty(_:)`).
        var whenEmpty: (@Sendable () -> Void)?

        /// The `whenEmpty` body, taken, when no call waits any more.
        mutating func takeWhenEmpty() -> (@Sendable () -> Void)? {
            guard entries.isEmpty, let body = whenEmpty else { return nil }
            whenEmpty = nil
            return body
        }
    }

    /// How many calls may wait for an answer at once.
    public let maxPending: Int
    /// How long a call waits when `call` is given no timeout of its own.
    public let timeout: Duration
    private let timers: any CallTimers
    private let state = Mutex(State())

    /// An empty table.
    ///
    /// - Parameters:
    ///   - maxPending: the bound on calls waiting at once (at least 1).
    ///   - timeout: the default time a call waits for its answer.
    ///   - timers: where timeouts run: the link's `EventLoop`, or a scheduler a test fires by hand.
    public init(maxPending: Int = defaultMaxPending, timeout: Duration = defaultTimeout, timers: any CallTimers) {
        self.maxPending = max(1, maxPending)
        self.timeout = timeout
        self.timers = timers
    }

    /// The number of calls waiting for an answer.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Sends `request` as a `call` through `send` and returns the value of its `result`.
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
    public nonisolated(nonsending) func call(
        _ request: CallRequest, timeout: Duration? = nil, send: @escaping @Sendable (WireMessage) throws -> Void
    ) async throws -> JSONValue {
        let id = try reserve(send: send)
        let limit = timeout ?? self.timeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start(id, request: request, timeout: limit, continuation: continuation)
            }
        } onCancel: {
            finish(id, .failure(CancellationError()), tellPeer: true)
        }
    }

    /// Hands over a message the link received; true when it is an answer to a call (`result`, or
    /// `error` with an id), which this table consumes, false for any other message.
    ///
    /// An answer whose id waits for nothing (it came after the call's timeout or cancellation, or the
    /// peer made it up) is dropped and still returns true.
    @discardableResult
    public func receive(_ message: WireMessage) -> Bool {
        switch message {
        case .result(let result):
            finish(result.id, .success(result.value), tellPeer: false)
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
    public func whenEmpty(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> (@Sendable () -> Void)? in
            state.whenEmpty = body
            return state.takeWhenEmpty()
        }
        now?()
    }

    /// Gives up call `id`: its caller fails with `cancelled` and the peer is sent a `cancel`. False
    /// when no such call waits.
    @discardableResult
    public func cancel(_ id: Int) -> Bool {
        finish(id, .failure(RemoteCallError(.cancelled, "call \(id) was cancelled by its caller")), tellPeer: true)
    }

    /// Fails every waiting call with `withdrawn` at once, and refuses later calls the same way. Call it
    /// when the link closes; later calls to it change nothing.
    public func close(reason: String = "the link closed") {
        let failure = RemoteCallError(.withdrawn, "the provider went away: \(reason)")
        let (taken, closed, emptied) = state.withLock {
            state -> ([(CheckedContinuation<JSONValue, any Error>, UInt64?)], RemoteCallError, (@Sendable () -> Void)?) in
            let closed = state.closed ?? failure
            state.closed = closed
            var taken: [(CheckedContinuation<JSONValue, any Error>, UInt64?)] = []
            for (id, entry) in state.entries {
                switch entry.waiter {
                case .waiting(let continuation):
                    taken.append((continuation, entry.timer))
                    state.entries[id] = nil
                case .reserved:
                    state.entries[id]?.waiter = .finished(.failure(closed))
                case .finished:
                    break
                }
            }
            return (taken, closed, state.takeWhenEmpty())
        }
        for (continuation, timer) in taken {
            if let timer { timers.cancelTimer(timer) }
            continuation.resume(throwing: closed)
        }
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

    /// Makes the caller wait for call `id`, arms its timeout and sends it.
    private func start(
        _ id: Int, request: CallRequest, timeout: Duration, continuation: CheckedContinuation<JSONValue, any Error>
    ) {
        let early = state.withLock { state -> (Result<JSONValue, any Error>, (@Sendable () -> Void)?)? in
            guard var entry = state.entries[id] else {
                return (.failure(RemoteCallError(.withdrawn, "call \(id) was lost by the table")), nil)
            }
            if case .finished(let outcome) = entry.waiter {
                state.entries[id] = nil
                return (outcome, state.takeWhenEmpty())
            }
            entry.waiter = .waiting(continuation)
            entry.sent = true
            state.entries[id] = entry
            return nil
        }
        if let (outcome, emptied) = early {
            continuation.resume(with: outcome)
            emptied?()
            return
        }
        let timer = timers.schedule(after: timeout) { [weak self] in
            self?.finish(id, .failure(RemoteCallError(.timeout, "call \(id) got no answer within \(timeout)")), tellPeer: true)
        }
        let armed = state.withLock { state -> Bool in
            guard state.entries[id] != nil else { return false }
            state.entries[id]?.timer = timer
            return true
        }
        if !armed { timers.cancelTimer(timer) }
        let send = state.withLock { $0.entries[id]?.send }
        guard let send else { return }
        do {
            try send(.call(request.call(id: id)))
        } catch {
            finish(id, .failure(error), tellPeer: false)
        }
    }

    /// Ends call `id` with `outcome` (sending a `cancel` first when `tellPeer` and it was sent); false
    /// when no such call is waiting.
    @discardableResult
    private func finish(_ id: Int, _ outcome: Result<JSONValue, any Error>, tellPeer: Bool) -> Bool {
        typealias Taken = (
            CheckedContinuation<JSONValue, any Error>?, UInt64?, (@Sendable (WireMessage) throws -> Void)?,
            (@Sendable () -> Void)?
        )
        let taken = state.withLock { state -> Taken? in
            guard let entry = state.entries[id] else { return nil }
            switch entry.waiter {
            case .reserved:
                state.entries[id]?.waiter = .finished(outcome)
                return (nil, nil, nil, nil)
            case .finished:
                return nil
            case .waiting(let continuation):
                state.entries[id] = nil
                return (continuation, entry.timer, tellPeer && entry.sent ? entry.send : nil, state.takeWhenEmpty())
            }
        }
        guard let (continuation, timer, send, emptied) = taken else { return false }
        if let timer { timers.cancelTimer(timer) }
        if let send { try? send(.cancel(id: id)) }
        continuation?.resume(with: outcome)
        emptied?()
        return true
    }
}
