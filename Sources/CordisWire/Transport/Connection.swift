import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One stream socket carrying length-prefixed frames, driven by an `EventLoop`.
///
/// Inbound frames are read and split on the loop thread, passed through the filter of the `Link`
/// that owns the connection (handshake, then frame authentication), and queued for the single
/// consumer of `frames`. Until its `Link` completes the handshake the connection keeps the handshake
/// bounds of its `ConnectionLimits`; use a connection through `Link`. The queue is bounded: when it is full the
/// connection stops reading its socket until the consumer drains it, so the peer's writes block and
/// nothing is lost. `enqueue(_:)`/`send(_:)` may be called from any thread; bytes that fit in the
/// socket are written at once, the rest wait in a bounded buffer, and passing that bound closes the
/// connection with `outboundBufferFull`. A frame over `maxFrameSize` is answered with a best-effort
/// error frame, then the connection closes.
public final class Connection: Sendable {
    enum Phase {
        case open
        /// Orderly close: flushing, then half-closed, discarding input until EOF or the drain deadline.
        case closing
        case closed
    }

    struct State {
        var fd: Int32
        var phase = Phase.open
        var established = false
        var outbound: [UInt8] = []
        var outboundStart = 0
        var watched = true
        var interest: UInt32
        var inbound: [[UInt8]] = []
        var inboundHead = 0
        var inboundBytes = 0
        var readPaused = false
        var writeShut = false
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var decoder: FrameDecoder
        var filter: FrameFilter?
        var closeError: TransportError?
        var deadlineTimer: UInt64?
        var drainTimer: UInt64?
        var closeWaiters: [CheckedContinuation<TransportError?, Never>] = []
        var closeCallbacks: [@Sendable (TransportError?) -> Void] = []
        var framesReceived = 0
        var bytesReceived = 0
        var establishedCallbacks: [@Sendable () -> Void] = []
        /// The inbound queue bounds in force: the pre-handshake ones until established.
        var queueFrames: Int
        var queueBytes: Int
        /// True once `setMaxFrameSize` chose the frame limit (establishing then leaves it alone).
        var frameSizeChosen = false

        var pendingOutbound: Int { outbound.count - outboundStart }
        var queuedFrames: Int { inbound.count - inboundHead }

        mutating func popFrame() -> [UInt8]? {
            guard inboundHead < inbound.count else { return nil }
            let frame = inbound[inboundHead]
            inbound[inboundHead] = []
            inboundHead += 1
            inboundBytes -= frame.count
            if inboundHead == inbound.count {
                inbound.removeAll(keepingCapacity: true)
                inboundHead = 0
            } else if inboundHead >= 64 && inboundHead * 2 >= inbound.count {
                inbound.removeSubrange(0..<inboundHead)
                inboundHead = 0
            }
            return frame
        }
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
    init(fd: Int32, loop: EventLoop, limits: ConnectionLimits, credentials known: PeerCredentials? = nil) throws {
        self.id = loop.allocateToken()
        self.loop = loop
        self.limits = limits
        self.localAddress = Address.ofSocket(fd, peer: false)
        self.remoteAddress = Address.ofSocket(fd, peer: true)
        if Address.isUnixSocket(fd) {
            self.credentials = known ?? PeerCredentials.read(from: fd)
        } else {
            _ = ccordis_set_no_delay(fd)
            self.credentials = nil
        }
        let interest = CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP
        // Until the handshake completes, the pre-handshake bounds apply: a peer that has not proved
        // anything cannot make this side buffer more than a small frame and a short queue.
        self.state = Mutex(State(
            fd: fd, interest: interest,
            decoder: FrameDecoder(maxFrameSize: min(limits.handshakeFrameSize, limits.maxFrameSize)),
            queueFrames: min(limits.handshakeQueueFrames, limits.inboundQueueFrames),
            queueBytes: min(limits.handshakeQueueBytes, limits.inboundQueueBytes)))
        do {
            try loop.register(token: id, fd: fd, events: interest, handler: self)
        } catch {
            Glibc.close(fd)
            throw error
        }
        if let timeout = limits.handshakeTimeout {
            let timer = loop.schedule(after: timeout) { [weak self] in
                guard let self else { return }
                self.close(reason: TransportError(
                    .handshakeTimeout, "connection \(self.id) was not established within \(timeout)"))
            }
            state.withLock { $0.deadlineTimer = timer }
        }
    }

    // MARK: Public surface

    /// The inbound frame payloads, in order. Only one task may iterate at a time.
    ///
    /// The sequence ends after the last queued frame once the connection closed in order (nil), and
    /// throws the close reason when it closed because of an error.
    public var frames: InboundFrames { InboundFrames(connection: self) }

    /// Sends one frame holding `payload`.
    ///
    /// - Throws: `TransportError` `closed` when the connection is closed or closing,
    ///   `outboundBufferFull` when the peer does not read (the connection is closed), `tooLarge`
    ///   when the payload is over `maxFrameSize` or the whole outbound buffer (only this frame fails:
    ///   the connection stays up).
    public func send(_ payload: [UInt8]) async throws {
        try enqueue(payload)
    }

    /// Sends one frame holding `payload` without suspending: callable from a frame filter on the loop
    /// thread. Same errors as `send(_:)`.
    public func enqueue(_ payload: [UInt8]) throws(TransportError) {
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
        guard framed.count <= limits.outboundBufferBytes else {
            throw TransportError(
                .tooLarge,
                "connection \(id): \(framed.count) bytes are more than the outbound limit of \(limits.outboundBufferBytes) bytes")
        }
        let failure: TransportError? = state.withLock { state in
            guard state.phase == .open, state.fd >= 0 else {
                return state.closeError ?? TransportError(.closed, "connection \(id) is closed")
            }
            return append(framed, to: &state, bypassLimit: false)
        }
        if let failure {
            if failure.code == .outboundBufferFull || failure.code == .connectionReset { abort(failure) }
            throw failure
        }
    }

    /// Installs (or removes) the filter run on every inbound frame on the loop thread.
    ///
    /// Frames queued before the filter is installed and not yet consumed are passed through it too, in
    /// order, so a filter installed right after accepting sees every frame (do not consume the
    /// connection's frames before installing it). Takes effect on the loop thread.
    package func setFilter(_ filter: FrameFilter?) {
        if loop.inLoopThread { installFilter(filter) } else { loop.execute { [self] in installFilter(filter) } }
    }

    private func installFilter(_ filter: FrameFilter?) {
        let pending = state.withLock { state -> [[UInt8]] in
            // A closed connection keeps no filter: it would hold its link (which holds this
            // connection) for ever.
            guard state.fd >= 0 else { return [] }
            state.filter = filter
            guard filter != nil, state.waiter == nil else { return [] }
            var pending: [[UInt8]] = []
            while let frame = state.popFrame() { pending.append(frame) }
            return pending
        }
        guard let filter, !pending.isEmpty else { return }
        var delivered: [[UInt8]] = []
        for payload in pending {
            switch filter(payload) {
            case .deliver(let output): delivered.append(output)
            case .consume: break
            case .reply(let output): try? enqueue(output)
            case .close(let error):
                queue(delivered)
                close(reason: error)
                return
            }
        }
        queue(delivered)
    }

    /// Changes the largest inbound frame accepted from now on.
    package func setMaxFrameSize(_ size: Int) {
        state.withLock { state in
            state.decoder.maxFrameSize = size
            state.frameSizeChosen = true
        }
    }

    /// Marks the handshake complete: cancels the handshake deadline and lifts the pre-handshake
    /// bounds (the frame size to `maxFrameSize` unless `setMaxFrameSize` chose one, the inbound
    /// queue to `inboundQueueFrames` and `inboundQueueBytes`).
    package func markEstablished() {
        let (timer, callbacks) = state.withLock { state -> (UInt64?, [@Sendable () -> Void]) in
            guard !state.established else { return (nil, []) }
            state.established = true
            state.queueFrames = limits.inboundQueueFrames
            state.queueBytes = limits.inboundQueueBytes
            if !state.frameSizeChosen { state.decoder.maxFrameSize = limits.maxFrameSize }
            resumeReadingIfDrained(&state)
            let callbacks = state.establishedCallbacks
            state.establishedCallbacks = []
            defer { state.deadlineTimer = nil }
            return (state.deadlineTimer, callbacks)
        }
        if let timer { loop.cancelTimer(timer) }
        for callback in callbacks { callback() }
    }

    /// True once `markEstablished()` was called.
    package var isEstablished: Bool { state.withLock { $0.established } }

    /// Calls `callback` once the connection is marked established (never when it closes first).
    func whenEstablished(_ callback: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.established { return true }
            if state.phase == .closed && state.fd < 0 { return false }
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
        let starts = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.phase = .closing
            state.closeError = reason
            return true
        }
        guard starts else { return }
        if loop.inLoopThread { beginClosing() } else { loop.execute { [self] in beginClosing() } }
    }

    /// Closes at once with `error`, dropping whatever waits to be written. Idempotent.
    public func abort(_ error: TransportError) {
        let starts = state.withLock { state -> Bool in
            guard state.phase != .closed else { return false }
            state.phase = .closed
            if state.closeError == nil { state.closeError = error }
            return true
        }
        guard starts else { return }
        if loop.inLoopThread { finishClose() } else { loop.execute { [self] in finishClose() } }
    }

    /// True once `close` or `abort` was called or the peer went away.
    public var isClosed: Bool { state.withLock { $0.phase != .open } }

    /// Why the connection closed: nil while open or after an orderly close.
    public var closeError: TransportError? { state.withLock { $0.closeError } }

    /// Waits until the socket is closed; returns the close reason (nil for an orderly close).
    public func closed() async -> TransportError? {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> TransportError?? in
                if state.phase == .closed && state.fd < 0 { return .some(state.closeError) }
                state.closeWaiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Calls `callback` once the socket is closed (at once when it already is), on the loop thread.
    public func whenClosed(_ callback: @escaping @Sendable (TransportError?) -> Void) {
        let done = state.withLock { state -> TransportError?? in
            if state.phase == .closed && state.fd < 0 { return .some(state.closeError) }
            state.closeCallbacks.append(callback)
            return nil
        }
        if let done { callback(done) }
    }

    /// How many frames arrived from the peer so far (the listener sheds the slowest connections first).
    package var framesReceived: Int { state.withLock { $0.framesReceived } }

    /// How far the peer got, for shedding the slowest first: frames read, then whether any byte
    /// arrived (read into a partial frame, or waiting in the socket).
    var progress: (frames: Int, bytes: Bool) {
        state.withLock { state in
            let waiting = state.fd >= 0 && ccordis_unread_bytes(state.fd) > 0
            return (state.framesReceived, state.bytesReceived > 0 || waiting)
        }
    }

    /// The number of bytes waiting to be written.
    package var bufferedOutboundBytes: Int { state.withLock { $0.pendingOutbound } }

    /// True while the connection does not read its socket because the inbound queue is full.
    package var isReadingPaused: Bool { state.withLock { $0.readPaused } }

    // MARK: Consumer side

    /// The next inbound payload; nil at the end after an orderly close; throws the close error.
    func nextFrame() async throws -> [UInt8]? {
        if let ready = try takeReady() { return ready.frame }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                let outcome = state.withLock { state -> Result<[UInt8]??, any Error> in
                    if let frame = state.popFrame() {
                        resumeReadingIfDrained(&state)
                        return .success(.some(frame))
                    }
                    if state.phase != .open {
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
                switch outcome {
                case .success(.some(let frame)): continuation.resume(returning: frame)
                case .success(.none): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private struct Ready { var frame: [UInt8]? }

    /// A frame or the end without suspending, or nil when the consumer must wait.
    private func takeReady() throws -> Ready? {
        let outcome = state.withLock { state -> Result<Ready?, TransportError> in
            if let frame = state.popFrame() {
                resumeReadingIfDrained(&state)
                return .success(Ready(frame: frame))
            }
            if state.phase != .open {
                if let error = state.closeError { return .failure(error) }
                return .success(Ready(frame: nil))
            }
            return .success(nil)
        }
        return try outcome.get()
    }

    private func resumeReadingIfDrained(_ state: inout State) {
        guard state.readPaused, state.queuedFrames <= state.queueFrames / 2,
            state.inboundBytes <= state.queueBytes / 2
        else { return }
        state.readPaused = false
        updateInterest(&state)
    }

    // MARK: Loop side

    /// Appends framed bytes to the outbound buffer, writing at once when nothing waits. Returns an
    /// error instead of throwing so the caller can act on it outside the lock.
    private func append(_ framed: [UInt8], to state: inout State, bypassLimit: Bool) -> TransportError? {
        var start = 0
        if state.pendingOutbound == 0 {
            let written = framed.withUnsafeBytes { ccordis_send(state.fd, $0.baseAddress, $0.count) }
            if written == framed.count { return nil }
            if written < 0 {
                let number = errno
                guard number == EAGAIN || number == EWOULDBLOCK || number == EINTR else {
                    return TransportError(.connectionReset, "cannot write to connection \(id)", errno: number)
                }
            } else {
                start = written
            }
        }
        let remaining = framed.count - start
        if !bypassLimit && state.pendingOutbound + remaining > limits.outboundBufferBytes {
            return TransportError(
                .outboundBufferFull,
                "connection \(id): the peer is not reading; \(state.pendingOutbound + remaining) bytes waiting "
                    + "exceed the outbound limit of \(limits.outboundBufferBytes) bytes")
        }
        if state.outboundStart > 0 && state.outboundStart * 2 >= state.outbound.count {
            state.outbound.removeSubrange(0..<state.outboundStart)
            state.outboundStart = 0
        }
        state.outbound.append(contentsOf: framed[start...])
        updateInterest(&state)
        return nil
    }

    /// Brings the epoll registration in line with the state: read unless paused or closed, write
    /// while bytes wait.
    private func updateInterest(_ state: inout State) {
        guard state.fd >= 0 else { return }
        var desired: UInt32 = 0
        if state.phase != .closed && !state.readPaused { desired |= CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP }
        if state.pendingOutbound > 0 { desired |= CCORDIS_EVENT_WRITE }
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

    private func readable(scratch: UnsafeMutableRawBufferPointer) {
        for _ in 0..<4 {
            let (fd, discarding) = state.withLock { state -> (Int32, Bool) in
                guard state.phase != .closed, !state.readPaused else { return (-1, false) }
                return (state.fd, state.phase == .closing)
            }
            guard fd >= 0 else { return }
            let count = read(fd, scratch.baseAddress, scratch.count)
            if count > 0 {
                if discarding { continue }
                if !take(UnsafeRawBufferPointer(rebasing: scratch[0..<count])) { return }
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

    /// Splits `bytes` into frames, filters and queues them; false when reading must stop.
    private func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var frames: [[UInt8]] = []
        var failure: WireError?
        let filter = state.withLock { state -> FrameFilter? in
            state.decoder.feed(bytes)
            state.bytesReceived &+= bytes.count
            do throws(WireError) {
                while let frame = try state.decoder.next() {
                    frames.append(frame.payload)
                    state.framesReceived += 1
                }
            } catch {
                failure = error
            }
            return state.filter
        }
        var delivered: [[UInt8]] = []
        delivered.reserveCapacity(frames.count)
        for payload in frames {
            guard let filter else {
                delivered.append(payload)
                continue
            }
            switch filter(payload) {
            case .deliver(let output): delivered.append(output)
            case .consume: break
            case .reply(let output): try? enqueue(output)
            case .close(let error):
                queue(delivered)
                close(reason: error)
                return false
            }
        }
        let keepReading = queue(delivered)
        if let failure {
            refuse(failure)
            return false
        }
        return keepReading
    }

    /// Queues frames for the consumer and hands one to a waiting consumer; false when the queue is
    /// full (reading paused).
    @discardableResult
    private func queue(_ payloads: [[UInt8]]) -> Bool {
        guard !payloads.isEmpty else { return true }
        let (waiter, frame, paused) = state.withLock {
            state -> (CheckedContinuation<[UInt8]?, any Error>?, [UInt8]?, Bool) in
            guard state.phase == .open else { return (nil, nil, true) }
            for payload in payloads {
                state.inbound.append(payload)
                state.inboundBytes += payload.count
            }
            var handed: [UInt8]?
            let waiter = state.waiter
            if waiter != nil {
                state.waiter = nil
                handed = state.popFrame()
            }
            if state.queuedFrames >= state.queueFrames || state.inboundBytes >= state.queueBytes {
                state.readPaused = true
                updateInterest(&state)
            } else {
                resumeReadingIfDrained(&state)
            }
            return (waiter, handed, state.readPaused)
        }
        if let waiter { waiter.resume(returning: frame) }
        return !paused
    }

    /// Answers a frame that breaks the framing rules with a best-effort error frame, then closes.
    private func refuse(_ failure: WireError) {
        let code: TransportError.Code = failure.code == .oversize ? .frameTooLarge : .protocolViolation
        let error = TransportError(code, "connection \(id): \(failure.message)")
        let notice = WireMessage.error(
            RemoteError(id: nil, code: failure.code.rawValue, message: BoundedText.clip(failure.message))).encoded
        var framed: [UInt8] = []
        try? FrameEncoder(maxFrameSize: Int.max).append(payload: notice, to: &framed)
        state.withLock { state in
            guard state.phase == .open, state.fd >= 0 else { return }
            _ = append(framed, to: &state, bypassLimit: true)
        }
        close(reason: error)
    }

    /// The peer closed its side.
    private func peerClosed() {
        let failure = state.withLock { state -> TransportError? in
            guard state.phase == .open else { return nil }
            do throws(WireError) {
                try state.decoder.finish()
                return nil
            } catch {
                return TransportError(.connectionReset, "connection \(id): \(error.message)")
            }
        }
        let closing = state.withLock { state -> Bool in
            if state.phase != .closed {
                state.phase = .closed
                if state.closeError == nil { state.closeError = failure }
            }
            return true
        }
        if closing { finishClose() }
    }

    private func writable() {
        let failure = state.withLock { state -> TransportError? in
            guard state.fd >= 0, state.phase != .closed else { return nil }
            while state.pendingOutbound > 0 {
                let written = state.outbound.withUnsafeBytes { buffer in
                    ccordis_send(state.fd, buffer.baseAddress! + state.outboundStart, state.pendingOutbound)
                }
                if written > 0 {
                    state.outboundStart += written
                    continue
                }
                let number = errno
                if written < 0 && number == EINTR { continue }
                if written < 0 && (number == EAGAIN || number == EWOULDBLOCK) { break }
                return TransportError(.connectionReset, "cannot write to connection \(id)", errno: number)
            }
            if state.pendingOutbound == 0 {
                state.outbound.removeAll(keepingCapacity: state.outbound.capacity <= 64 * 1024)
                state.outboundStart = 0
                if state.phase == .closing && !state.writeShut {
                    _ = ccordis_shutdown_write(state.fd)
                    state.writeShut = true
                }
            }
            updateInterest(&state)
            return nil
        }
        if let failure { abort(failure) }
    }

    /// On the loop thread: flush, half-close, arm the drain deadline; wakes a waiting consumer.
    private func beginClosing() {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard state.phase == .closing else { return nil }
            state.drainTimer = loop.schedule(after: limits.drainTimeout) { [self] in
                let now = self.state.withLock { state -> Bool in
                    guard state.phase != .closed else { return false }
                    state.phase = .closed
                    return true
                }
                if now { finishClose() }
            }
            state.readPaused = false
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

    /// On the loop thread: closes the socket and tells everyone waiting.
    private func finishClose() {
        let taken = state.withLock { state -> (Int32, [UInt64], CheckedContinuation<[UInt8]?, any Error>?, [CheckedContinuation<TransportError?, Never>], [@Sendable (TransportError?) -> Void], TransportError?)? in
            guard state.fd >= 0 else { return nil }
            let fd = state.fd
            state.fd = -1
            state.phase = .closed
            let timers = [state.deadlineTimer, state.drainTimer].compactMap { $0 }
            state.deadlineTimer = nil
            state.drainTimer = nil
            state.outbound = []
            state.outboundStart = 0
            // Release what the connection holds whatever its consumer is doing: the filter (which
            // may hold the link that holds this connection) and the partial frame being read. Frames
            // already queued stay readable; the queue is bounded, and the listener drops a closed
            // connection nobody took.
            state.filter = nil
            state.decoder = FrameDecoder(maxFrameSize: state.decoder.maxFrameSize)
            state.establishedCallbacks = []
            let waiter = state.waiter
            state.waiter = nil
            let waiters = state.closeWaiters
            let callbacks = state.closeCallbacks
            state.closeWaiters = []
            state.closeCallbacks = []
            return (fd, timers, waiter, waiters, callbacks, state.closeError)
        }
        guard let (fd, timers, waiter, waiters, callbacks, reason) = taken else { return }
        loop.deregister(token: id, fd: fd)
        Glibc.close(fd)
        for timer in timers { loop.cancelTimer(timer) }
        if let waiter { resumeAtEnd(waiter) }
        for continuation in waiters { continuation.resume(returning: reason) }
        for callback in callbacks { callback(reason) }
        let text = reason.map { "connection \(id) closed: \($0.message)" } ?? "connection \(id) closed"
        loop.report(TransportEvent(.connectionClosed, text, connectionID: id, credentials: credentials, error: reason))
    }

    /// Hands a waiting consumer a queued frame, or the end of the sequence.
    private func resumeAtEnd(_ waiter: CheckedContinuation<[UInt8]?, any Error>) {
        let outcome = state.withLock { state -> Result<[UInt8]?, any Error> in
            if let frame = state.popFrame() { return .success(frame) }
            if let error = state.closeError { return .failure(error) }
            return .success(nil)
        }
        waiter.resume(with: outcome)
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
