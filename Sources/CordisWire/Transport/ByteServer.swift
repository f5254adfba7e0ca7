import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A small plain-TCP server on an `EventLoop` for one request and one answer per connection (a node's
/// `/metrics` endpoint speaks HTTP/1.1 through it), without frames or a handshake.
///
/// Every accepted connection is bounded: at most `Limits.maxConnections` at once (more are closed on
/// accept), at most `Limits.maxRequestBytes` read before the handler answers (then it is closed), and
/// `Limits.deadline` from accept to the end of the answer (then it is closed, answered or not). Reads
/// run on the loop thread; after each one the handler sees every byte received so far and says
/// whether it needs more or answers (now or later, through the `Reply`, from any thread). An answer is
/// written, the sending side shut down, and the connection closed once the peer ends its side (or the
/// deadline passes), so a peer that reads to the end of the stream gets every byte.
///
/// An answer may instead be a stream (`Reply.open`, server-sent events): its head is written, the
/// deadline no longer applies, and later writes go out as they come until either side closes it; a
/// peer that reads too slowly (more than `Limits.maxStreamBacklog` bytes waiting) is cut.
///
/// With a TLS context (`TLSContext(serverCertificateFile:keyFile:)`, HTTPS) every connection runs a
/// `TLSEngine`: the handler sees the plaintext, its answers are encrypted, and a peer that does not speak
/// TLS is closed.
package final class ByteServer: Sendable {
    /// The bounds of every connection.
    package struct Limits: Sendable, Hashable {
        /// The most connections held at once.
        package var maxConnections: Int
        /// The most bytes read from one connection before the handler answers.
        package var maxRequestBytes: Int
        /// How long a connection may live, from accept to the end of its answer (or the opening of a stream).
        package var deadline: Duration
        /// The most bytes a stream may have waiting for a slow peer before it is cut.
        package var maxStreamBacklog: Int

        /// Limits; the defaults suit a scraper: 64 connections, 16 KiB, 10 s, a 1 MiB stream backlog.
        package init(
            maxConnections: Int = 64, maxRequestBytes: Int = 16 * 1024, deadline: Duration = .seconds(10),
            maxStreamBacklog: Int = 1 << 20
        ) {
            self.maxConnections = maxConnections
            self.maxRequestBytes = maxRequestBytes
            self.deadline = deadline
            self.maxStreamBacklog = maxStreamBacklog
        }
    }

    /// What the handler makes of the bytes received so far.
    package enum Verdict: Sendable {
        /// Not a whole request yet: read on.
        case needMore
        /// The request is whole (or refused): the handler answers through the `Reply`, now or later.
        case answering
    }

    /// How the handler answers one connection: from any thread, once (later answers are ignored).
    package struct Reply: Sendable {
        fileprivate let exchange: ByteExchange

        /// Writes `bytes`, then ends the connection.
        package func send(_ bytes: [UInt8]) { exchange.reply(bytes) }

        /// Answers with a stream: writes `head` at once and keeps the connection open for the stream's
        /// later writes, without the deadline. `onClose` runs once when the stream ends, from either side.
        package func open(_ head: [UInt8], onClose: @escaping @Sendable () -> Void) -> Stream {
            exchange.open(head, onClose: onClose)
            return Stream(exchange: exchange)
        }
    }

    /// An answer that goes on: bytes written as they come, until either side closes it. Any thread.
    package struct Stream: Sendable {
        fileprivate let exchange: ByteExchange

        /// Queues `bytes` for the peer; a peer with more than `Limits.maxStreamBacklog` bytes waiting is cut.
        package func write(_ bytes: [UInt8]) { exchange.write(bytes) }

        /// Ends the stream and the connection.
        package func close() { exchange.closeStream() }
    }

    /// The address bound (with the real port when port 0 was asked for).
    package let address: Address
    /// The bounds of every connection.
    package let limits: Limits

    fileprivate let loop: EventLoop
    fileprivate let tls: TLSContext?
    fileprivate let handler: @Sendable ([UInt8], Reply) -> Verdict
    private let token: UInt64
    fileprivate let state: Mutex<(fd: Int32, live: Int)>

    /// Binds and listens on the TCP `address` (port 0 picks one) on `loop`; `handler` runs on the loop
    /// thread after each read of a connection that has not been answered. With `tls`, every connection is
    /// TLS (the handler sees the plaintext).
    ///
    /// - Throws: `TransportError`: `invalidAddress` for a Unix address, else as `EventLoop.listen`.
    package init(
        listeningOn address: Address, loop: EventLoop, limits: Limits = Limits(), tls: TLSContext? = nil,
        handler: @escaping @Sendable ([UInt8], Reply) -> Verdict
    ) throws {
        guard case .tcp(let host, let port) = address else {
            throw TransportError(.invalidAddress, "\(address) is not a TCP address")
        }
        let (fd, bound) = try loop.bindTCP(host: host, port: port, backlog: 128)
        self.address = bound
        self.limits = limits
        self.loop = loop
        self.tls = tls
        self.handler = handler
        self.token = loop.allocateToken()
        self.state = Mutex((fd, 0))
        do {
            try loop.register(token: token, fd: fd, events: CCORDIS_EVENT_READ, handler: self)
        } catch {
            _ = ccordis_close_socket(fd)
            throw error
        }
    }

    /// Stops listening (the connections being answered finish). Idempotent, any thread.
    package func close() {
        if loop.inLoopThread { closeOnLoop() } else { loop.execute { [self] in closeOnLoop() } }
    }

    /// The number of connections open.
    package var connectionCount: Int { state.withLock { $0.live } }

    private func closeOnLoop() {
        let fd = state.withLock { state -> Int32 in
            defer { state.fd = -1 }
            return state.fd
        }
        guard fd >= 0 else { return }
        loop.deregister(token: token, fd: fd)
        _ = ccordis_close_socket(fd)
    }

    fileprivate func ended() {
        state.withLock { $0.live -= 1 }
    }
}

extension ByteServer: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        for _ in 0..<16 {
            let fd = state.withLock { $0.fd }
            guard fd >= 0 else { return }
            let client = ccordis_accept(fd)
            if client < 0 {
                let number = errno
                if number == EINTR || number == ECONNABORTED || number == EPROTO { continue }
                // EAGAIN: nothing more to accept; anything else (no descriptors left): the next
                // readiness retries, and the connections held meanwhile are bounded.
                return
            }
            let admitted = state.withLock { state -> Bool in
                guard state.live < limits.maxConnections else { return false }
                state.live += 1
                return true
            }
            guard admitted else {
                _ = ccordis_close_socket(client)
                continue
            }
            do {
                try ByteExchange.start(fd: client, server: self)
            } catch {
                ended()
            }
        }
    }

    func loopStopped() {
        closeOnLoop()
    }
}

/// One connection of a `ByteServer`: its bytes in, its answer out, its deadline.
private final class ByteExchange: Sendable {
    struct State {
        var fd: Int32
        var inbound: [UInt8] = []
        var outbound: [UInt8] = []
        /// The handler answers (or did): nothing more is shown to it.
        var answering = false
        /// The answer was handed over.
        var replied = false
        /// The sending side is shut down (the answer is all written).
        var writeShut = false
        /// The peer ended its side.
        var peerEnded = false
        var interest: UInt32
        var timer: UInt64?
        /// The answer is a stream: the sending side stays open once the queue is written.
        var streaming = false
        /// Runs once when a stream ends.
        var onClose: (@Sendable () -> Void)?
    }

    private let server: ByteServer
    private let token: UInt64
    private let state: Mutex<State>
    /// The connection's TLS session, when the server has a TLS context.
    private let engine: TLSEngine?

    private init(fd: Int32, server: ByteServer, engine: TLSEngine?) {
        self.server = server
        self.token = server.loop.allocateToken()
        self.state = Mutex(State(fd: fd, interest: CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP))
        self.engine = engine
    }

    /// Starts serving `fd` (on the loop thread).
    static func start(fd: Int32, server: ByteServer) throws {
        var engine: TLSEngine?
        if let context = server.tls {
            do {
                engine = try TLSEngine(context: context, side: .server)
            } catch {
                _ = ccordis_close_socket(fd)
                throw TransportError(.tls, "TLS: \(error.message)")
            }
        }
        let exchange = ByteExchange(fd: fd, server: server, engine: engine)
        do {
            try server.loop.register(token: exchange.token, fd: fd, events: CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP, handler: exchange)
        } catch {
            _ = ccordis_close_socket(fd)
            throw error
        }
        let timer = server.loop.schedule(after: server.limits.deadline) { [weak exchange] in
            guard let exchange else { return }
            if exchange.server.loop.inLoopThread { exchange.finish() } else { exchange.server.loop.execute { exchange.finish() } }
        }
        let closed = exchange.state.withLock { state -> Bool in
            state.timer = timer
            return state.fd < 0
        }
        if closed { server.loop.cancelTimer(timer) }
    }

    func reply(_ bytes: [UInt8]) {
        let loop = server.loop
        if loop.inLoopThread { replyOnLoop(bytes) } else { loop.execute { [self] in replyOnLoop(bytes) } }
    }

    /// `bytes` as they go on the wire: encrypted under TLS (and with the session's end after them when
    /// `last`); nil when the session cannot encrypt them (the connection is then closed).
    private func sealed(_ bytes: [UInt8], last: Bool = false) -> [UInt8]? {
        guard let engine else { return bytes }
        do throws(TLSError) {
            try engine.send(bytes)
        } catch {
            return nil
        }
        if last { engine.close() }
        return engine.takeOutbound()
    }

    func open(_ head: [UInt8], onClose: @escaping @Sendable () -> Void) {
        let loop = server.loop
        let job: @Sendable () -> Void = { [self] in
            guard let head = sealed(head) else {
                finish()
                onClose()
                return
            }
            let (open, timer) = state.withLock { state -> (Bool, UInt64?) in
                guard state.fd >= 0, !state.replied else { return (false, nil) }
                state.replied = true
                state.answering = true
                state.streaming = true
                state.onClose = onClose
                state.outbound += head
                defer { state.timer = nil }
                return (true, state.timer)
            }
            guard open else {
                onClose()
                return
            }
            if let timer { loop.cancelTimer(timer) }
            flush()
        }
        if loop.inLoopThread { job() } else { loop.execute(job) }
    }

    func write(_ bytes: [UInt8]) {
        let limit = server.limits.maxStreamBacklog
        server.loop.execute { [self] in
            guard state.withLock({ $0.fd >= 0 && $0.streaming }) else { return }
            guard let bytes = sealed(bytes) else {
                finish()
                return
            }
            let verdict = state.withLock { state -> Bool? in
                guard state.fd >= 0, state.streaming else { return nil }
                guard state.outbound.count + bytes.count <= limit else { return false }
                state.outbound += bytes
                return true
            }
            switch verdict {
            case true?: flush()
            case false?: finish()
            case nil: break
            }
        }
    }

    func closeStream() {
        server.loop.execute { [self] in finish() }
    }

    private func replyOnLoop(_ bytes: [UInt8]) {
        guard state.withLock({ $0.fd >= 0 && !$0.replied }) else { return }
        guard let bytes = sealed(bytes, last: true) else {
            finish()
            return
        }
        let open = state.withLock { state -> Bool in
            guard state.fd >= 0, !state.replied else { return false }
            state.replied = true
            state.answering = true
            state.outbound += bytes
            return true
        }
        if open { flush() }
    }

    /// Writes what waits; once all is written, shuts the sending side and closes when the peer ended.
    private func flush() {
        let done = state.withLock { state -> Bool in
            guard state.fd >= 0 else { return false }
            while !state.outbound.isEmpty {
                let written = state.outbound.withUnsafeBytes { ccordis_send(state.fd, $0.baseAddress, $0.count) }
                if written > 0 {
                    state.outbound.removeFirst(written)
                    continue
                }
                let number = errno
                if written < 0 && number == EINTR { continue }
                if written < 0 && (number == EAGAIN || number == EWOULDBLOCK) {
                    setInterest(&state, CCORDIS_EVENT_WRITE | (state.peerEnded ? 0 : CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP))
                    return false
                }
                return true  // the peer is gone
            }
            guard state.replied else { return false }
            if state.streaming {
                setInterest(&state, CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP)
                return false
            }
            if !state.writeShut {
                state.writeShut = true
                _ = ccordis_shutdown_write(state.fd)
            }
            if state.peerEnded { return true }
            setInterest(&state, CCORDIS_EVENT_READ | CCORDIS_EVENT_READ_HANGUP)
            return false
        }
        if done { finish() }
    }

    private func setInterest(_ state: inout State, _ desired: UInt32) {
        guard desired != state.interest, state.fd >= 0 else { return }
        let loop = server.loop
        if desired == 0 {
            loop.unwatch(fd: state.fd)
        } else if state.interest == 0 {
            _ = loop.rewatch(token: token, fd: state.fd, events: desired)
        } else {
            _ = loop.modify(token: token, fd: state.fd, events: desired)
        }
        state.interest = desired
    }

    /// Closes the connection (on the loop thread). Idempotent.
    func finish() {
        let (fd, timer, onClose) = state.withLock { state -> (Int32, UInt64?, (@Sendable () -> Void)?) in
            defer {
                state.fd = -1
                state.timer = nil
                state.onClose = nil
            }
            return (state.fd, state.timer, state.onClose)
        }
        guard fd >= 0 else { return }
        if let timer { server.loop.cancelTimer(timer) }
        server.loop.deregister(token: token, fd: fd)
        _ = ccordis_close_socket(fd)
        server.ended()
        onClose?()
    }
}

extension ByteExchange: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        if events & CCORDIS_EVENT_WRITE != 0 { flush() }
        for _ in 0..<4 {
            let fd = state.withLock { $0.peerEnded ? -1 : $0.fd }
            guard fd >= 0 else { return }
            let count = Glibc.read(fd, scratch.baseAddress, scratch.count)
            if count > 0 {
                var bytes = Array(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                if let engine {
                    // The handshake's flights go out at once; the handler sees only the plaintext.
                    let plain: [UInt8]
                    do throws(TLSError) {
                        plain = try engine.receive(bytes)
                    } catch {
                        finish()
                        return
                    }
                    let flight = engine.takeOutbound()
                    if !flight.isEmpty {
                        state.withLock { $0.outbound += flight }
                        flush()
                    }
                    guard !plain.isEmpty else { continue }
                    bytes = plain
                }
                let (show, tooMuch) = state.withLock { state -> ([UInt8]?, Bool) in
                    // Once answering, what the peer still sends is read and dropped.
                    guard !state.answering else { return (nil, false) }
                    state.inbound.append(contentsOf: bytes)
                    if state.inbound.count > server.limits.maxRequestBytes { return (nil, true) }
                    return (state.inbound, false)
                }
                if tooMuch {
                    finish()
                    return
                }
                if let show, server.handler(show, ByteServer.Reply(exchange: self)) == .answering {
                    state.withLock { state in
                        state.answering = true
                        state.inbound = []
                    }
                }
                continue
            }
            let number = errno
            if count < 0 && (number == EAGAIN || number == EWOULDBLOCK) { return }
            if count < 0 && number == EINTR { continue }
            // The peer ended its side (or the socket failed): done once the answer is out, or at once
            // when nothing is being answered.
            let close = state.withLock { state -> Bool in
                state.peerEnded = true
                if count < 0 || !state.answering || state.streaming || (state.replied && state.outbound.isEmpty) { return true }
                setInterest(&state, state.outbound.isEmpty ? 0 : CCORDIS_EVENT_WRITE)
                return false
            }
            if close { finish() }
            return
        }
    }

    func loopStopped() {
        finish()
    }
}
