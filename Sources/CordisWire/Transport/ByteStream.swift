import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP byte stream on an `EventLoop`, without frames or a handshake: what an HTTP client needs
/// to speak to a coordination service (etcd's JSON gateway).
///
/// Reads run on the loop thread into a bounded inbound buffer; when it holds `maxBufferedBytes` the
/// stream stops reading until the single consumer of `read()` drains it. Writes are made at once from
/// the caller's thread where the socket takes them; the rest waits (bounded by `maxBufferedBytes` too).
package final class ByteStream: Sendable {
    private struct State {
        var fd: Int32
        var inbound: [UInt8] = []
        var outbound: [UInt8] = []
        var ended = false
        var failure: TransportError?
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var paused = false
        var interest: UInt32
        var closed = false
    }

    /// The most bytes kept waiting in either direction.
    package let maxBufferedBytes: Int
    private let token: UInt64
    private let loop: EventLoop
    private let state: Mutex<State>

    private init(fd: Int32, loop: EventLoop, maxBufferedBytes: Int) throws {
        self.token = loop.allocateToken()
        self.loop = loop
        self.maxBufferedBytes = maxBufferedBytes
        let interest = CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP
        self.state = Mutex(State(fd: fd, interest: interest))
        _ = ccordis_set_no_delay(fd)
        do {
            try loop.register(token: token, fd: fd, events: interest, handler: self)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Connects to `host` (a numeric address or a name the system resolves) on `port`.
    ///
    /// - Throws: `TransportError` (`connectionRefused`, `connectTimeout`, `invalidAddress`, `systemError`).
    package static func connect(
        host: String, port: UInt16, on loop: EventLoop, timeout: Duration, maxBufferedBytes: Int = 1 << 20
    ) async throws -> ByteStream {
        let numeric = try EventLoop.numericHost(host)
        let fd = ccordis_stream_socket(ccordis_numeric_family(numeric))
        guard fd >= 0 else { throw TransportError.system(.systemError, "cannot create a TCP socket") }
        let target = Address.tcp(host: host, port: port)
        let status = ccordis_inet_connect(fd, numeric, port)
        if status < 0 {
            let number = errno
            Glibc.close(fd)
            throw TransportError(.connectionRefused, "nobody listens on \(target)", errno: number)
        }
        if status == 1 {
            do {
                try await PendingDial(fd: fd, loop: loop, target: target).wait(timeout: timeout)
            } catch {
                Glibc.close(fd)
                throw error
            }
        }
        return try ByteStream(fd: fd, loop: loop, maxBufferedBytes: maxBufferedBytes)
    }

    /// Writes `bytes` (any thread).
    ///
    /// - Throws: `TransportError` `closed` after `close()`, `connectionReset` when the socket failed,
    ///   `outboundBufferFull` when the peer does not read.
    package func write(_ bytes: [UInt8]) throws(TransportError) {
        let failure = state.withLock { state -> TransportError? in
            guard !state.closed, state.fd >= 0 else { return TransportError(.closed, "the stream is closed") }
            if let failure = state.failure { return failure }
            var start = 0
            if state.outbound.isEmpty {
                let written = bytes.withUnsafeBytes { ccordis_send(state.fd, $0.baseAddress, $0.count) }
                if written == bytes.count { return nil }
                if written < 0 {
                    let number = errno
                    guard number == EAGAIN || number == EWOULDBLOCK || number == EINTR else {
                        return TransportError(.connectionReset, "cannot write to the stream", errno: number)
                    }
                } else {
                    start = written
                }
            }
            guard state.outbound.count + bytes.count - start <= maxBufferedBytes else {
                return TransportError(.outboundBufferFull, "the peer does not read: more than \(maxBufferedBytes) bytes wait")
            }
            state.outbound.append(contentsOf: bytes[start...])
            updateInterest(&state)
            return nil
        }
        if let failure { throw failure }
    }

    /// The next bytes read, nil at the end of the stream.
    ///
    /// - Throws: the `TransportError` that ended the stream, or `CancellationError`.
    package func read() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                let outcome = state.withLock { state -> Result<[UInt8]?, any Error>? in
                    if !state.inbound.isEmpty {
                        let bytes = state.inbound
                        state.inbound.removeAll(keepingCapacity: true)
                        if state.paused {
                            state.paused = false
                            updateInterest(&state)
                        }
                        return .success(bytes)
                    }
                    if let failure = state.failure { return .failure(failure) }
                    if state.ended || state.closed { return .success(nil) }
                    if state.waiter != nil { return .failure(TransportError(.systemError, "the stream already has a reader")) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Closes the socket; a waiting `read()` returns nil. Idempotent, any thread.
    ///
    /// The descriptor itself is closed on the loop thread, where reads happen: closed from another
    /// thread while the loop reads it, its number could be reused by another socket meanwhile and the
    /// read would take that socket's bytes.
    package func close() {
        let (waiter, fd) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Int32) in
            guard !state.closed else { return (nil, -1) }
            state.closed = true
            let fd = state.fd
            state.fd = -1
            defer { state.waiter = nil }
            return (state.waiter, fd)
        }
        if fd >= 0 {
            let (loop, token) = (self.loop, self.token)
            if loop.inLoopThread {
                loop.deregister(token: token, fd: fd)
                _ = ccordis_close_socket(fd)
            } else {
                // Stop watching at once (no more events), close where the reads run.
                loop.unwatch(fd: fd)
                loop.execute {
                    loop.deregister(token: token, fd: fd)
                    _ = ccordis_close_socket(fd)
                }
            }
        }
        waiter?.resume(returning: nil)
    }

    private func updateInterest(_ state: inout State) {
        guard state.fd >= 0 else { return }
        var desired: UInt32 = 0
        if !state.paused && !state.ended { desired |= CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP }
        if !state.outbound.isEmpty { desired |= CCORDIS_EVENT_WRITE }
        guard desired != state.interest else { return }
        if desired == 0 {
            loop.unwatch(fd: state.fd)
        } else if state.interest == 0 {
            loop.rewatch(token: token, fd: state.fd, events: desired)
        } else {
            loop.modify(token: token, fd: state.fd, events: desired)
        }
        state.interest = desired
    }

    private func deliver(_ state: inout State) -> CheckedContinuation<[UInt8]?, any Error>? {
        guard let waiter = state.waiter else { return nil }
        state.waiter = nil
        return waiter
    }
}

extension ByteStream: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        // Pending writes first. A socket that refuses them has failed: the stream ends with that
        // failure and drops what waited, so the loop stops watching for a writability that never comes.
        var wake: (CheckedContinuation<[UInt8]?, any Error>, Result<[UInt8]?, any Error>)?
        state.withLock { state in
            guard state.fd >= 0, !state.outbound.isEmpty else { return }
            let written = state.outbound.withUnsafeBytes { ccordis_send(state.fd, $0.baseAddress, $0.count) }
            let number = written < 0 ? errno : 0
            if written > 0 { state.outbound.removeFirst(written) }
            if written < 0 && number != EAGAIN && number != EWOULDBLOCK && number != EINTR {
                state.outbound.removeAll()
                state.ended = true
                if state.failure == nil {
                    state.failure = TransportError(.connectionReset, "the stream failed while writing", errno: number)
                }
                if let waiter = deliver(&state), let failure = state.failure {
                    wake = (waiter, state.inbound.isEmpty ? .failure(failure) : .success(state.inbound))
                    state.inbound.removeAll()
                }
            }
            updateInterest(&state)
        }
        if let (waiter, result) = wake {
            wake = nil
            waiter.resume(with: result)
        }
        for _ in 0..<4 {
            let fd = state.withLock { $0.paused || $0.ended || $0.closed ? -1 : $0.fd }
            guard fd >= 0 else { break }
            let count = Glibc.read(fd, scratch.baseAddress, scratch.count)
            if count > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<count])
                let stop = state.withLock { state -> Bool in
                    state.inbound.append(contentsOf: bytes)
                    if state.inbound.count >= maxBufferedBytes {
                        state.paused = true
                        updateInterest(&state)
                    }
                    if let waiter = deliver(&state) {
                        let taken = state.inbound
                        state.inbound.removeAll(keepingCapacity: true)
                        if state.paused {
                            state.paused = false
                            updateInterest(&state)
                        }
                        wake = (waiter, .success(taken))
                    }
                    return state.paused
                }
                if let (waiter, result) = wake {
                    wake = nil
                    waiter.resume(with: result)
                }
                if stop { break }
                continue
            }
            let number = errno
            if count < 0 && (number == EAGAIN || number == EWOULDBLOCK) { break }
            if count < 0 && number == EINTR { continue }
            state.withLock { state in
                state.ended = true
                if count < 0 { state.failure = TransportError(.connectionReset, "the stream failed while reading", errno: number) }
                updateInterest(&state)
                if let waiter = deliver(&state) {
                    if !state.inbound.isEmpty {
                        let taken = state.inbound
                        state.inbound.removeAll()
                        wake = (waiter, .success(taken))
                    } else if let failure = state.failure {
                        wake = (waiter, .failure(failure))
                    } else {
                        wake = (waiter, .success(nil))
                    }
                }
            }
            break
        }
        if let (waiter, result) = wake { waiter.resume(with: result) }
    }

    func loopStopped() {
        close()
    }
}
