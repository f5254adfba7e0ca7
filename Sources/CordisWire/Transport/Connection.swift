import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One stream socket carrying length-prefixed frames, driven by an `EventLoop`.
///
/// Inbound frames are read and split on the loop thread, passed through the filter of the `Link`
/// that owns the connection (handshake, then frame authentication and decoding), and queued for the
/// single consumer of `frames` (or of the link's `messages`). Until its `Link` completes the handshake
/// the connection keeps the handshake bounds of its `ConnectionLimits`; use a connection through
/// `Link`. The queue is bounded: when it is full the connection stops reading its socket until the
/// consumer drains it, so the peer's writes block and nothing is lost. `enqueue(_:)`/`send(_:)` may be
/// called from any thread: the sender writes at once when no other write is under way (outside any
/// lock), the rest wait in a bounded buffer that the writer in progress, or the loop once the socket
/// drains, writes in order; passing that bound closes the connection with `outboundBufferFull`. A
/// frame over `maxFrameSize` is answered with a best-effort error frame, then the connection closes.
public final class Connection: Sendable, DeferredWriter {
    /// A consumer's wait for the next item: resumed with the outcome, which it throws once back on its
    /// executor. (A throwing continuation would throw straight out of the resumption, and Swift 6.3.1
    /// then skips the hop back to a `nonisolated(nonsending)` caller's executor: swiftlang/swift#88259.)
    typealias ConsumerWait = UnsafeContinuation<Result<InboundItem?, any Error>, Never>

    /// Where the connection is in its life. The socket is open in every phase but `closed`.
    enum Phase: Equatable {
        /// Open, under the handshake bounds.
        case handshaking
        /// Open, under the full bounds (`markEstablished()` was called).
        case established
        /// Orderly close: no more sends; flushing what is buffered, then half-closed, discarding
        /// input until the peer's EOF or the drain deadline.
        case draining(halfClosed: Bool)
        /// Closing at once: buffered output is dropped; the loop closes the socket next.
        case aborting
        /// The socket is closed.
        case closed

        var isOpen: Bool { self == .handshaking || self == .established }
    }

    /// How a connection cuts its inbound bytes.
    package enum Framing: Sendable {
        /// Length-prefixed frames: the Cordis wire.
        case frames
        /// Each read as it came: a plain byte stream (`ByteStream`).
        case raw
    }

    struct State {
        var fd: Int32
        var phase = Phase.handshaking
        /// The bytes to write, in order, and who writes them.
        var writes = WriteQueue()
        var watched = true
        var interest: UInt32
        /// The items read and not yet consumed; it pauses reading at its bounds (the pre-handshake
        /// ones until established).
        var inbound: InboundQueue
        /// The consumer waiting for the next item: resumed only by whoever takes it out of this
        /// state under the lock (so exactly once, and an unsafe continuation suffices).
        var waiter: ConsumerWait?
        /// The pure steps from socket bytes to payloads: stream filter, frame splitting.
        var codec: CodecChain
        var filter: FrameFilter?
        /// The TLS layer, when the connection has one (kept after close for its peer's name).
        var tls: TLSStreamFilter?
        var closeError: TransportError?
        /// The handshake's deadline while one is armed: its timer and when it fires.
        var deadline: (timer: UInt64, at: ContinuousClock.Instant)?
        var drainTimer: UInt64?
        /// Told the close reason once the socket is closed (`whenClosed`, and `closed()`'s waiters).
        var closeCallbacks: [@Sendable (TransportError?) -> Void] = []
        /// When the connection last made progress in its handshake: accepted, or a whole frame arrived.
        var lastProgress = ContinuousClock.now
        var establishedCallbacks: [@Sendable () -> Void] = []
        /// True once `setMaxFrameSize` chose the frame limit (establishing then leaves it alone).
        var frameSizeChosen = false

        init(fd: Int32, interest: UInt32, codec: CodecChain, inbound: InboundQueue) {
            self.fd = fd
            self.interest = interest
            self.codec = codec
            self.inbound = inbound
            self.tls = codec.streamFilter as? TLSStreamFilter
        }

        /// True while the socket is there and sends may still go out (not closed, not aborting).
        var canWrite: Bool { fd >= 0 && phase != .aborting && phase != .closed }
    }

    /// A write claimed under the lock, to run outside it.
    package struct WriteClaim {
        let fd: Int32
        let bytes: [UInt8]
    }

    /// A number naming this connection in events and logs, unique within its loop.
    public let id: UInt64
    /// The local address of the socket.
    public let localAddress: Address?
    /// The peer's address (nil for an unnamed Unix peer).
    public let remoteAddress: Address?
    /// The peer's credentials on a Unix socket, as the kernel reported them.
    public let credentials: PeerCredentials?
    /// The bounds this connection applies.
    public let limits: ConnectionLimits
    let loop: EventLoop
    private let state: Mutex<State>

    /// Wraps a connected non-blocking socket and starts watching it. Takes ownership of `fd`.
    init(
        fd: Int32, loop: EventLoop, limits: ConnectionLimits, credentials known: PeerCredentials? = nil,
        streamFilter: (any StreamFilter)? = nil, framing: Framing = .frames
    ) throws {
        self.id = loop.allocateToken()
        self.loop = loop
        self.limits = limits
        self.localAddress = Address.ofSocket(fd, peer: false)
        self.remoteAddress = Address.ofSocket(fd, peer: true)
        let isUnix = Address.isUnixSocket(fd)
        if isUnix {
            self.credentials = known ?? PeerCredentials.read(from: fd)
        } else {
            _ = ccordis_set_no_delay(fd)
            self.credentials = nil
        }
        let interest = CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP
        // Until the handshake completes, the pre-handshake bounds apply: a peer that has not proved
        // anything cannot make this side buffer more than a small frame and a short queue.
        let cutting: CodecChain.Framing = switch framing {
        case .frames: .frames(FrameDecoder(maxFrameSize: min(limits.handshakeFrameSize, limits.maxFrameSize)))
        case .raw: .raw
        }
        self.state = Mutex(State(
            fd: fd, interest: interest,
            codec: CodecChain(framing: cutting, streamFilter: streamFilter, sniffsTLS: framing == .frames && !isUnix),
            inbound: InboundQueue(
                maxItems: min(limits.handshakeQueueFrames, limits.inboundQueueFrames),
                maxBytes: min(limits.handshakeQueueBytes, limits.inboundQueueBytes))))
        do {
            try loop.register(token: id, fd: fd, events: interest, handler: self)
        } catch {
            Glibc.close(fd)
            throw error
        }
        if let timeout = limits.handshakeTimeout { armHandshakeDeadline(after: timeout) }
    }

    /// Arms the handshake's deadline `timeout` from now, unless one armed before comes sooner (the limits
    /// arm one as the connection opens; a link arms its own as its handshake begins): a connection still
    /// not established then closes with `handshakeTimeout`. The one deadline of a handshake, whoever runs
    /// it.
    package func armHandshakeDeadline(after timeout: Duration) {
        let due = ContinuousClock.now + timeout
        let sooner = state.withLock { state in state.deadline.map { $0.at <= due } ?? false }
        guard !sooner else { return }
        let timer = loop.schedule(after: timeout) { [weak self] in
            guard let self else { return }
            self.shut(.handshakeDeadline, TransportError(
                .handshakeTimeout, "connection \(self.id) was not established within \(timeout)"))
        }
        let cancelled = state.withLock { state -> UInt64? in
            // Established or closed meanwhile, or a sooner deadline armed: this one is not needed.
            guard state.phase == .handshaking, state.deadline.map({ $0.at > due }) ?? true else { return timer }
            defer { state.deadline = (timer, due) }
            return state.deadline?.timer
        }
        if let cancelled { loop.cancelTimer(cancelled) }
    }

    // MARK: Public surface

    /// The inbound frame payloads, in order. Only one task may iterate at a time.
    ///
    /// The sequence ends after the last queued frame once the connection closed in order (nil), and
    /// throws the close reason when it closed because of an error.
    package var frames: InboundFrames { InboundFrames(connection: self) }

    /// Sends one frame holding `payload`.
    ///
    /// - Throws: `TransportError`: the close reason (`closed` for an orderly close) when the connection is
    ///   closed or closing (it then goes on closing as it was),
    ///   `outboundBufferFull` when the peer does not read, `tls` when the stream filter cannot encode
    ///   the bytes (both close the connection), `tooLarge`
    ///   when the payload is over `maxFrameSize` or the whole outbound buffer (only this frame fails:
    ///   the connection stays up).
    package func send(_ payload: [UInt8]) async throws {
        try enqueue(payload)
    }

    /// Sends one frame holding `payload` without suspending: callable from a frame filter on the loop
    /// thread. Same errors as `send(_:)`.
    package func enqueue(_ payload: [UInt8]) throws(TransportError) {
        var framed: [UInt8] = []
        framed.reserveCapacity(payload.count + Frame.headerSize)
        do {
            try FrameEncoder(maxFrameSize: limits.maxFrameSize).append(payload: payload, to: &framed)
        } catch {
            throw TransportError(.tooLarge, error.message)
        }
        try enqueueFramed(framed)
    }

    /// Sends bytes that are already framed (one or several whole frames), as one write.
    ///
    /// Throws `tooLarge` (the connection stays up) when the bytes are more than the whole outbound
    /// buffer, otherwise the errors of `send(_:)`.
    package func enqueueFramed(_ framed: [UInt8]) throws(TransportError) {
        if let claim = try stage(framed) { write(claim) }
    }

    /// Puts framed bytes in line to be sent, under the lock and without a syscall. Returns a claim
    /// when the caller is the one to write them (no write under way): it must then call
    /// `write(_:)`, outside any lock. Callers that order their sends under a lock of their own (the
    /// sequence numbers of a `Link`) stage under it and write after releasing it. `bypassLimit` is for
    /// this side's last word (an error notice before closing) and for the stream filter's own bytes,
    /// which `raw` keeps from passing through the filter again.
    package func stage(_ framed: [UInt8], bypassLimit: Bool = false, raw: Bool = false) throws(TransportError) -> WriteClaim? {
        guard bypassLimit || framed.count <= limits.outboundBufferBytes else {
            throw TransportError(
                .tooLarge,
                "connection \(id): \(framed.count) bytes are more than the outbound limit of \(limits.outboundBufferBytes) bytes")
        }
        // Errors this send raises end the connection (`ends`): a peer that does not read, or a stream filter
        // that failed (its session can carry nothing more). A connection closed or closing refuses the send
        // with its close reason and changes nothing: its orderly close still delivers what waits.
        enum Staged { case staged(WriteClaim?), refused(TransportError), ends(TransportError) }
        let outcome = state.withLock { state -> Staged in
            guard state.phase.isOpen || bypassLimit, state.fd >= 0, state.phase != .aborting else {
                return .refused(state.closeError ?? TransportError(.closed, "connection \(id) is closed"))
            }
            var bytes = framed
            if !raw {
                do throws(TransportError) {
                    bytes = try state.codec.outbound(framed)
                } catch {
                    return .ends(error)
                }
            }
            switch state.writes.stage(bytes, limit: bypassLimit ? nil : limits.outboundBufferBytes) {
            case .claimed(let bytes):
                return .staged(WriteClaim(fd: state.fd, bytes: bytes))
            case .queued:
                return .staged(nil)
            case .overLimit(let pending):
                return .ends(TransportError(
                    .outboundBufferFull,
                    "connection \(id): the peer is not reading; \(pending) bytes waiting "
                        + "exceed the outbound limit of \(limits.outboundBufferBytes) bytes"))
            }
        }
        switch outcome {
        case .staged(let claim):
            return claim
        case .refused(let error):
            throw error
        case .ends(let error):
            abort(error)
            throw error
        }
    }

    /// Installs (or removes) the filter run on every inbound frame on the loop thread.
    ///
    /// Frames queued before the filter is installed and not yet consumed are passed through it too, in
    /// order, so a filter installed right after accepting sees every frame (do not consume the
    /// connection's frames before installing it). Takes effect on the loop thread.
    package func setFilter(_ filter: FrameFilter?) {
        onLoop { [self] in installFilter(filter) }
    }

    /// Installs the stream filter (see `StreamFilter`); call it before any byte is sent or read, on
    /// the loop thread or before the connection is handed out.
    package func setStreamFilter(_ filter: (any StreamFilter)?) {
        state.withLock {
            $0.codec.streamFilter = filter
            $0.tls = filter as? TLSStreamFilter
        }
    }

    /// The connection's TLS layer, nil on a plain connection.
    package var tls: TLSStreamFilter? { state.withLock { $0.tls } }

    private func installFilter(_ filter: FrameFilter?) {
        let pending = state.withLock { state -> [[UInt8]] in
            // A closed connection keeps no filter: it would hold its link (which holds this
            // connection) for ever.
            guard state.fd >= 0 else { return [] }
            state.filter = filter
            guard filter != nil, state.waiter == nil else { return [] }
            return state.inbound.popAll().compactMap { item in
                if case .frame(let payload) = item { payload } else { nil }
            }
        }
        guard let filter, !pending.isEmpty else { return }
        var delivered = OneOrMore<(InboundItem, Int)>()
        for payload in pending {
            if !apply(filter, to: payload, into: &delivered) {
                queue(delivered)
                return
            }
        }
        queue(delivered)
    }

    /// Runs `filter` on one payload; false when the filter closed the connection.
    private func apply(_ filter: FrameFilter, to payload: [UInt8], into delivered: inout OneOrMore<(InboundItem, Int)>) -> Bool {
        switch filter(payload) {
        case .deliver(let output): delivered.append((.frame(output), output.count))
        case .decoded(let message): delivered.append((.message(message), payload.count))
        case .consume: break
        case .reply(let output): try? enqueue(output)
        case .close(let error):
            queue(delivered)
            delivered = OneOrMore()
            close(reason: error)
            return false
        }
        return true
    }

    /// Changes the largest inbound frame accepted from now on.
    package func setMaxFrameSize(_ size: Int) {
        state.withLock { state in
            state.codec.maxFrameSize = size
            state.frameSizeChosen = true
        }
    }

    /// Marks the handshake complete: cancels the handshake deadline and lifts the pre-handshake
    /// bounds (the frame size to `maxFrameSize` unless `setMaxFrameSize` chose one, the inbound
    /// queue to `inboundQueueFrames` and `inboundQueueBytes`). `peerVersion`, the protocol version agreed
    /// with the peer, spells the codes of the error frames sent from now on.
    package func markEstablished(peerVersion: ProtocolVersion? = nil) {
        let (timer, callbacks, resume) = state.withLock { state -> (UInt64?, [@Sendable () -> Void], Bool) in
            guard state.phase == .handshaking else { return (nil, [], false) }
            state.phase = .established
            state.codec.peerVersion = peerVersion
            let resume = state.inbound.setBounds(maxItems: limits.inboundQueueFrames, maxBytes: limits.inboundQueueBytes)
            if !state.frameSizeChosen { state.codec.maxFrameSize = limits.maxFrameSize }
            let callbacks = state.establishedCallbacks
            state.establishedCallbacks = []
            defer { state.deadline = nil }
            return (state.deadline?.timer, callbacks, resume)
        }
        if resume { refreshInterest() }
        if let timer { loop.cancelTimer(timer) }
        for callback in callbacks { callback() }
    }

    /// True while the connection is open and `markEstablished()` was called.
    package var isEstablished: Bool { state.withLock { $0.phase == .established } }

    /// Calls `callback` once the connection is marked established (never when it closes first).
    func whenEstablished(_ callback: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.phase == .established { return true }
            guard state.phase == .handshaking else { return false }
            state.establishedCallbacks.append(callback)
            return false
        }
        if now { callback() }
    }

    /// Closes in order: stops accepting sends, writes what is buffered, half-closes, waits briefly for
    /// the peer to close its side (at most `drainTimeout`), then closes the socket.
    ///
    /// Frames already queued stay readable. `reason` (when given) is what `frames` throws at its end and
    /// what `closed()` returns; nil means an orderly close. Idempotent.
    public func close(reason: TransportError? = nil) {
        shut(.orderly, reason)
    }

    /// Closes at once with `error`, dropping whatever waits to be written. Idempotent.
    public func abort(_ error: TransportError) {
        shut(.immediate, error)
    }

    /// Closes at once, dropping whatever waits to be written, as an orderly end: the consumer reads
    /// what is queued, then the end. Idempotent.
    package func closeNow() {
        shut(.immediate, nil)
    }

    /// True once `close` or `abort` was called or the peer went away.
    public var isClosed: Bool { state.withLock { !$0.phase.isOpen } }

    /// Why the connection closed: nil while open or after an orderly close.
    public var closeError: TransportError? { state.withLock { $0.closeError } }

    /// Waits until the socket is closed; returns the close reason (nil for an orderly close).
    public func closed() async -> TransportError? {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> TransportError?? in
                if state.phase == .closed { return .some(state.closeError) }
                state.closeCallbacks.append { continuation.resume(returning: $0) }
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Calls `callback` once the socket is closed (at once when it already is), on the loop thread.
    public func whenClosed(_ callback: @escaping @Sendable (TransportError?) -> Void) {
        let done = state.withLock { state -> TransportError?? in
            if state.phase == .closed { return .some(state.closeError) }
            state.closeCallbacks.append(callback)
            return nil
        }
        if let done { callback(done) }
    }

    /// How many frames arrived from the peer so far (the listener sheds the slowest connections first).
    package var framesReceived: Int { state.withLock { $0.codec.payloadsReceived } }

    /// How far the connection got in its handshake, for the listener's shedding: whether a whole frame
    /// arrived, and when it last made progress (it was accepted, or a whole frame arrived). Bytes that
    /// make no whole frame do not count, so a peer cannot look busy by trickling them.
    var handshakeProgress: (framed: Bool, at: ContinuousClock.Instant) {
        state.withLock { ($0.codec.payloadsReceived > 0, $0.lastProgress) }
    }

    /// The number of bytes waiting to be written.
    package var bufferedOutboundBytes: Int { state.withLock { $0.writes.pending } }

    /// How many `send(2)` calls the connection made (for tests of write batching).
    package var sendCalls: Int { state.withLock { $0.writes.sendCalls } }

    /// True while the connection does not read its socket because the inbound queue is full.
    package var isReadingPaused: Bool { state.withLock { $0.inbound.isPaused } }

    /// True while a consumer waits for the next inbound item.
    package var hasWaitingConsumer: Bool { state.withLock { $0.waiter != nil } }

    // MARK: Consumer side

    /// The next inbound item; nil at the end after an orderly close; throws the close error, or
    /// `CancellationError` when the waiting task is cancelled.
    nonisolated(nonsending) func nextItem() async throws -> InboundItem? {
        if let ready = try takeReady() { return ready.item }
        return try await withTaskCancellationHandler {
            try await withUnsafeContinuation { wait(for: $0) }.get()
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: .failure(CancellationError()))
        }
    }

    /// `nextItem()` for a consumer that ends with the connection, not by cancellation (a node's session
    /// reader): a task cancelled before it waits still gets `CancellationError`, but a wait under way
    /// is not interrupted. No cancellation handler is installed around each wait, which saves the
    /// waiting task a hop off its actor and back per item (the handler's operation runs as a
    /// nonisolated closure, on the task's preferred executor).
    nonisolated(nonsending) func nextItemUninterruptibly() async throws -> InboundItem? {
        if let ready = try takeReady() { return ready.item }
        // Thrown after the resumption, not out of it: see `ConsumerWait`.
        return try await withUnsafeContinuation { wait(for: $0) }.get()
    }

    /// Hands `continuation` the next item, the end or the close error at once, or leaves it waiting for
    /// the loop thread to resume it.
    private func wait(for continuation: ConsumerWait) {
        var resume = false
        let outcome = state.withLock { state -> Result<InboundItem??, any Error> in
            if let item = state.inbound.pop() {
                resume = state.inbound.resumeIfDrained()
                return .success(.some(item))
            }
            if !state.phase.isOpen {
                if let error = state.closeError { return .failure(error) }
                return .success(.some(nil))
            }
            if state.waiter != nil {
                return .failure(TransportError(.systemError, "connection \(id) already has a reader"))
            }
            if Task.isCancelled { return .failure(CancellationError()) }
            state.waiter = continuation
            return .success(nil)
        }
        if resume { refreshInterest() }
        switch outcome {
        case .success(.some(let item)): continuation.resume(returning: .success(item))
        case .success(.none): break
        case .failure(let error): continuation.resume(returning: .failure(error))
        }
    }

    /// The next inbound frame payload (see `frames`).
    nonisolated(nonsending) func nextFrame() async throws -> [UInt8]? {
        switch try await nextItem() {
        case .frame(let payload)?: return payload
        case .message(let message)?: return message.encoded
        case nil: return nil
        }
    }

    private struct Ready { var item: InboundItem? }

    /// An item or the end without suspending, or nil when the consumer must wait.
    private func takeReady() throws -> Ready? {
        var resume = false
        let outcome = state.withLock { state -> Result<Ready?, TransportError> in
            if let item = state.inbound.pop() {
                resume = state.inbound.resumeIfDrained()
                return .success(Ready(item: item))
            }
            if !state.phase.isOpen {
                if let error = state.closeError { return .failure(error) }
                return .success(Ready(item: nil))
            }
            return .success(nil)
        }
        if resume { refreshInterest() }
        return try outcome.get()
    }

    // MARK: Writing

    /// Writes a claim's bytes, then whatever was staged meanwhile, outside the lock. A full socket
    /// leaves the rest to the loop (which writes it when the socket drains); the connection is
    /// aborted when the socket fails.
    ///
    /// On the thread driving the loop (its handlers, and the tasks' jobs it runs), a write after the
    /// turn's first to this connection waits for the end of the turn when the loop batches writes:
    /// the bytes go first in line and the claim stays held, so what other senders stage meanwhile goes
    /// behind them, and the loop writes it all at once (`writeDeferred()`).
    package func write(_ claim: WriteClaim) {
        if loop.deferWrite(of: self) {
            state.withLock { $0.writes.deferClaim(claim.bytes) }
            return
        }
        writeNow(claim)
    }

    /// Writes what a deferred claim left in line, with whatever was staged behind it (the loop calls
    /// it at the end of the turn). A connection aborted meanwhile drops the bytes; the write still
    /// ends the usual way (a close waiting for it goes ahead).
    func writeDeferred() {
        let claim = state.withLock { state -> WriteClaim? in
            state.writes.takeDeferred(dropping: !state.canWrite).map { WriteClaim(fd: state.fd, bytes: $0) }
        }
        if let claim { writeNow(claim) }
    }

    /// Writes a claim's bytes now (see `write(_:)`).
    private func writeNow(_ claim: WriteClaim) {
        var bytes = claim.bytes
        let fd = claim.fd
        while true {
            var start = 0
            var failure: Int32?
            var calls = 0
            while start < bytes.count {
                calls += 1
                let written = bytes.withUnsafeBytes { buffer in
                    ccordis_send(fd, buffer.baseAddress.map { $0 + start }, buffer.count - start)
                }
                if written > 0 {
                    start += written
                    continue
                }
                let number = errno
                if written < 0 && number == EINTR { continue }
                if written < 0 && (number == EAGAIN || number == EWOULDBLOCK) { break }
                failure = number
                break
            }
            let (next, flushOnLoop) = state.withLock { state -> (WriteQueue.AfterWrite, Bool) in
                let next = state.writes.wrote(
                    bytes, upTo: start, calls: calls, failed: failure != nil, aborting: state.phase == .aborting)
                // An orderly close half-closes once everything is written: the loop does it.
                return (next, state.phase == .draining(halfClosed: false))
            }
            switch next {
            case .more(let more):
                bytes = more
                continue
            case .awaitWritable:
                refreshInterest()
                return
            case .done(let closeSocket):
                if let failure {
                    // The peer is gone (it closed, or reset). What it sent before (its goodbye) may still
                    // wait in the socket: the loop reads it first, then the connection ends; aborting here
                    // would stop the loop from reading it at all. Always a job of its own, never inside a
                    // read under way (a reply written while reading), so what is read stays in order.
                    let error = TransportError(.connectionReset, "cannot write to connection \(id)", errno: failure)
                    loop.execute { [self] in
                        withUnsafeTemporaryAllocation(byteCount: 64 * 1024, alignment: 16) { readable(scratch: $0) }
                        abort(error)
                    }
                }
                if closeSocket { onLoop { [self] in finishClose() } }
                if flushOnLoop { onLoop { [self] in writable() } }
                return
            }
        }
    }

    /// On the loop thread, when the socket drained (or an orderly close wants its half-close): writes
    /// what waits unless a writer is at it, and half-closes a draining connection once all is out.
    private func writable() {
        enum Step { case none, write(WriteClaim), halfClose(Int32) }
        let step = state.withLock { state -> Step in
            guard state.canWrite else { return .none }
            switch state.writes.socketWritable() {
            case .busy:
                return .none
            case .write(let bytes):
                return .write(WriteClaim(fd: state.fd, bytes: bytes))
            case .idle:
                break
            }
            updateInterest(&state)
            if case .draining(halfClosed: false) = state.phase {
                state.phase = .draining(halfClosed: true)
                return .halfClose(state.fd)
            }
            return .none
        }
        switch step {
        case .none: break
        case .write(let claim): writeNow(claim)
        case .halfClose(let fd):
            // Only the loop thread closes the socket, so `fd` is still this connection's.
            _ = ccordis_shutdown_write(fd)
        }
    }

    // MARK: Loop side

    /// Runs `body` on the loop thread: at once when already there.
    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if loop.inLoopThread { body() } else { loop.execute(body) }
    }

    /// Brings the epoll registration up to date, on the loop thread.
    private func refreshInterest() {
        onLoop { [self] in state.withLock { updateInterest(&$0) } }
    }

    /// Brings the epoll registration in line with the state: read unless paused or closed, write
    /// while bytes wait for the socket. Loop thread only (epoll calls, never on a sender's thread).
    private func updateInterest(_ state: inout State) {
        guard state.fd >= 0 else { return }
        var desired: UInt32 = 0
        if state.phase != .aborting && !state.inbound.isPaused { desired |= CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP }
        if state.writes.awaitsWritable { desired |= CCORDIS_EVENT_WRITE }
        if desired == 0 {
            // Unwatched entirely, so a hang-up cannot spin the loop while reading is paused.
            if state.watched {
                loop.unwatch(fd: state.fd)
                state.watched = false
            }
            return
        }
        if !state.watched {
            if loop.rewatch(token: id, fd: state.fd, events: desired) { state.watched = true }
            state.interest = desired
        } else if desired != state.interest {
            loop.modify(token: id, fd: state.fd, events: desired)
            state.interest = desired
        }
    }

    /// Reads what waits in the socket now, as the loop does when it reports the socket readable (on the
    /// loop thread only): the listener lets a connection it is about to shed show the progress it made.
    func catchUp(scratch: UnsafeMutableRawBufferPointer) {
        readable(scratch: scratch)
    }

    private func readable(scratch: UnsafeMutableRawBufferPointer) {
        for _ in 0..<4 {
            let (fd, discarding) = state.withLock { state -> (Int32, Bool) in
                guard state.phase != .aborting, state.phase != .closed, !state.inbound.isPaused else { return (-1, false) }
                return (state.fd, !state.phase.isOpen)
            }
            guard fd >= 0 else { return }
            let count = read(fd, scratch.baseAddress, scratch.count)
            if count > 0 {
                if !discarding, !take(UnsafeRawBufferPointer(rebasing: scratch[0..<count])) { return }
                // A read that did not fill the buffer emptied the socket: the loop's level-triggered
                // poll reports whatever comes next, so asking again would only find EAGAIN.
                if count < scratch.count { return }
                continue
            }
            if count == 0 {
                peerClosed()
                return
            }
            let number = errno
            if number == EAGAIN || number == EWOULDBLOCK { return }
            if number == EINTR { continue }
            abort(TransportError(.connectionReset, "connection \(id) failed while reading", errno: number))
            return
        }
    }

    /// Runs `bytes` through the codec chain, then filters and queues the payloads; false when reading
    /// must stop.
    private func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var replyClaim: WriteClaim?
        let (step, filter) = state.withLock { state -> (CodecChain.Step, FrameFilter?) in
            let step = state.codec.receive(bytes, connection: id)
            // Put in line under this lock, so that no send encrypted after it (a TLS record numbered
            // later) can reach the socket before it.
            if !step.reply.isEmpty, state.canWrite, case .claimed(let bytes) = state.writes.stage(step.reply, limit: nil) {
                replyClaim = WriteClaim(fd: state.fd, bytes: bytes)
            }
            if !step.payloads.isEmpty, state.phase == .handshaking { state.lastProgress = .now }
            return (step, state.filter)
        }
        if case .stream(let error, let lastWords) = step.end {
            // The filter's last word (a TLS alert, a plain refusal) goes out before the close.
            if !lastWords.isEmpty, let claim = try? stage(lastWords, bypassLimit: true, raw: true) {
                write(claim)
                close(reason: error)
            } else {
                abort(error)
            }
            return false
        }
        if let replyClaim { write(replyClaim) }
        var delivered = OneOrMore<(InboundItem, Int)>()
        for payload in step.payloads {
            guard let filter else {
                delivered.append((.frame(payload), payload.count))
                continue
            }
            if !apply(filter, to: payload, into: &delivered) { return false }
        }
        let keepReading = queue(delivered)
        if case .framing(let error, let notice) = step.end {
            // A best-effort error frame, then the close.
            if let claim = try? stage(notice, bypassLimit: true) { write(claim) }
            close(reason: error)
            return false
        }
        return keepReading
    }

    /// Queues items for the consumer and hands one to a waiting consumer; false when the queue is
    /// full (reading paused). On the loop thread.
    @discardableResult
    private func queue(_ items: OneOrMore<(InboundItem, Int)>) -> Bool {
        guard !items.isEmpty else { return true }
        let (waiter, item, reading) = state.withLock {
            state -> (ConsumerWait?, InboundItem?, Bool) in
            guard state.phase.isOpen else { return (nil, nil, false) }
            let waiter = state.waiter
            state.waiter = nil
            let (handed, reading) = state.inbound.append(items, handing: waiter != nil)
            updateInterest(&state)
            return (waiter, handed, reading)
        }
        if let waiter { waiter.resume(returning: .success(item)) }
        return reading
    }

    /// The peer closed its side: the partial frame left (if any) is the close reason.
    private func peerClosed() {
        let failure = state.withLock { state -> TransportError? in
            guard state.phase.isOpen else { return nil }
            return state.codec.finish(connection: id)
        }
        shut(.peerGone, failure)
    }

    private enum Shutdown {
        /// `close(reason:)`: flush, half-close, drain.
        case orderly
        /// `abort(_:)`: drop what is buffered, close now.
        case immediate
        /// The peer's EOF, or the drain deadline: close now, keeping an earlier reason.
        case peerGone
        /// The handshake deadline: an orderly close, only while the handshake is still running (a
        /// `markEstablished()` decided just before the timer ran wins; the phase decides, under the lock).
        case handshakeDeadline
    }

    /// The one way a connection closes: moves the phase on under the lock, then finishes on the loop.
    private func shut(_ how: Shutdown, _ reason: TransportError?) {
        let next = state.withLock { state -> Phase? in
            switch (how, state.phase) {
            case (_, .closed), (_, .aborting):
                return nil
            case (.orderly, .draining), (.handshakeDeadline, .established), (.handshakeDeadline, .draining):
                return nil
            case (.orderly, _), (.handshakeDeadline, .handshaking):
                state.phase = .draining(halfClosed: false)
                state.closeError = reason
            case (.immediate, _), (.peerGone, _):
                state.phase = .aborting
                if state.closeError == nil { state.closeError = reason }
            }
            return state.phase
        }
        guard let next else { return }
        if next == .aborting {
            onLoop { [self] in finishClose() }
        } else {
            onLoop { [self] in beginDraining() }
        }
    }

    /// On the loop thread: flush, half-close, arm the drain deadline; wakes a waiting consumer.
    private func beginDraining() {
        let waiter = state.withLock { state -> ConsumerWait? in
            guard case .draining = state.phase else { return nil }
            state.drainTimer = loop.schedule(after: limits.drainTimeout) { [self] in shut(.peerGone, nil) }
            state.inbound.unpause()
            updateInterest(&state)
            defer { state.waiter = nil }
            return state.waiter
        }
        writable()
        if let waiter { resumeAtEnd(waiter) }
        if let reason = closeError {
            loop.report(TransportEvent(.connectionClosed, "closing connection \(id): \(reason.message)",
                connectionID: id, credentials: credentials, error: reason))
        }
    }

    /// On the loop thread: closes the socket (after a write under way) and tells everyone waiting.
    private func finishClose() {
        typealias Taken = (Int32, [UInt64], ConsumerWait?, [@Sendable (TransportError?) -> Void], TransportError?)
        let taken = state.withLock { state -> Taken? in
            guard state.fd >= 0 else { return nil }
            // A sender in `send(2)` on this descriptor calls back when done.
            guard state.writes.close() else { return nil }
            let fd = state.fd
            state.fd = -1
            state.phase = .closed
            let timers = [state.deadline?.timer, state.drainTimer].compactMap { $0 }
            state.deadline = nil
            state.drainTimer = nil
            // Release what the connection holds whatever its consumer is doing: the filter (which
            // may hold the link that holds this connection) and the partial frame being read. Items
            // already queued stay readable; the queue is bounded, and the listener drops a closed
            // connection nobody took.
            state.filter = nil
            state.codec.release()
            state.establishedCallbacks = []
            let waiter = state.waiter
            state.waiter = nil
            let callbacks = state.closeCallbacks
            state.closeCallbacks = []
            return (fd, timers, waiter, callbacks, state.closeError)
        }
        guard let (fd, timers, waiter, callbacks, reason) = taken else { return }
        loop.deregister(token: id, fd: fd)
        // The peer hears the end now even if a child forked meanwhile holds a copy of the socket.
        _ = ccordis_close_socket(fd)
        for timer in timers { loop.cancelTimer(timer) }
        if let waiter { resumeAtEnd(waiter) }
        for callback in callbacks { callback(reason) }
        let text = reason.map { "connection \(id) closed: \($0.message)" } ?? "connection \(id) closed"
        loop.report(TransportEvent(.connectionClosed, text, connectionID: id, credentials: credentials, error: reason))
    }

    /// Hands a waiting consumer a queued item, or the end of the sequence.
    private func resumeAtEnd(_ waiter: ConsumerWait) {
        let outcome = state.withLock { state -> Result<InboundItem?, any Error> in
            if let item = state.inbound.pop() { return .success(item) }
            if let error = state.closeError { return .failure(error) }
            return .success(nil)
        }
        waiter.resume(returning: outcome)
    }
}

extension Connection: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        if events & (CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP | CCORDIS_EVENT_HANGUP | CCORDIS_EVENT_ERROR) != 0 {
            readable(scratch: scratch)
        }
        if events & CCORDIS_EVENT_WRITE != 0 { writable() }
    }

    func loopStopped() {
        abort(TransportError(.closed, "the event loop stopped"))
    }
}
