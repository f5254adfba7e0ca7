import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A listening socket on an `EventLoop` that accepts connections, applies the peer policy and the
/// connection limits, and hands admitted connections to `connections`.
///
/// Refused peers (by credentials or by the limit) are closed right after `accept`, before anything is
/// read, and reported as `TransportEvent`s. Every admitted connection starts with the pre-handshake
/// bounds of its `ConnectionLimits` (64 KiB frames, a small queue) and its handshake deadline, on the
/// loop, before any consumer sees it. The connections that have not finished their handshake are
/// bounded per listener (`maxPendingHandshakes`) and per source (`maxPendingHandshakesPerSource`):
/// when a bound is reached one that sent no whole frame yet, then the one that stalled longest (its
/// last whole frame, or its accept, is the oldest) is closed with `handshakeShed` — for the listener's bound, among the sources holding the
/// most — so a peer that completes its handshake promptly gets in while others flood the listener,
/// from one source or many. A
/// connection that closes before the consumer takes it is dropped on the loop and never handed out.
/// Create one with `EventLoop.listen(on:options:)` or `EventLoop.adoptListener(fd:options:)`;
/// `close()` stops it and removes the Unix socket file it created.
public final class Listener: Sendable {
    /// An admitted connection that has not finished its handshake.
    private struct Pending {
        var connection: Connection
        var order: UInt64
        var source: String
    }

    private struct State {
        var fd: Int32
        var live = 0
        var watched = true
        var nextOrder: UInt64 = 0
        var pending: [Pending] = []
        /// Admitted connections not yet taken by the consumer, oldest first.
        var ready: [Connection] = []
        var waiter: CheckedContinuation<Connection?, Never>?
        var finished = false
    }

    /// The address actually bound (with the real port when port 0 was asked for).
    public let address: Address
    /// The options this listener applies.
    public let options: ListenerOptions

    private let loop: EventLoop
    private let token: UInt64
    private let state: Mutex<State>
    /// The socket file this listener created (device, inode), removed on close if still the same.
    private let socketFile: (path: String, device: UInt64, inode: UInt64)?
    /// True when the socket was passed in (socket activation) and another process keeps it listening;
    /// false when this listener created it and its close must end the listening for every copy.
    private let shared: Bool

    init(fd: Int32, address: Address, loop: EventLoop, options: ListenerOptions, createdPath: String?, shared: Bool) throws {
        self.address = address
        self.shared = shared
        self.options = options
        self.loop = loop
        self.token = loop.allocateToken()
        self.state = Mutex(State(fd: fd))
        if let createdPath {
            var info = stat()
            if lstat(createdPath, &info) == 0 {
                socketFile = (createdPath, UInt64(info.st_dev), UInt64(info.st_ino))
            } else {
                socketFile = nil
            }
        } else {
            socketFile = nil
        }
        try loop.register(token: token, fd: fd, events: CCORDIS_EVENT_READ, handler: self)
    }

    /// The admitted connections, in accept order; ends when the listener closes.
    ///
    /// Only open connections are handed out: one that closed while waiting here is dropped. At most
    /// `maxPendingHandshakes` wait (the bound of connections in their handshake). One consumer at a
    /// time.
    public var connections: AcceptedConnections { AcceptedConnections(listener: self) }

    /// The number of admitted connections still open.
    public var connectionCount: Int { state.withLock { $0.live } }

    /// The number of admitted connections still open that have not finished their handshake.
    public var pendingHandshakeCount: Int { state.withLock { $0.pending.count } }

    /// Stops listening: closes the socket, removes the Unix socket file it created, ends
    /// `connections`. Accepted connections stay open. Idempotent.
    ///
    /// A socket this listener created stops listening even where another copy of its descriptor is
    /// still open (a child process forked meanwhile holds one until it execs or exits): from the end of
    /// `connections` on, a dial to the address is refused. A socket passed to `EventLoop.adoptListener`
    /// is only closed here, and keeps listening for its other holder.
    public func close() {
        removeSocketFile()
        if loop.inLoopThread { closeOnLoop() } else { loop.execute { [self] in closeOnLoop() } }
    }

    private func closeOnLoop() {
        let fd = state.withLock { state -> Int32 in
            defer { state.fd = -1 }
            return state.fd
        }
        // The socket stops listening before anyone can hear of the end (`finished` is set only after
        // it): whoever awaited the end may dial the address next and must be refused, not queued in
        // the backlog of a socket another copy of the descriptor keeps open (a forked child's). Only
        // shutdown ends the listening for every copy; close ends it only with the last one.
        if fd >= 0 {
            loop.deregister(token: token, fd: fd)
            if shared { Glibc.close(fd) } else { _ = ccordis_close_socket(fd) }
            removeSocketFile()
        }
        let waiter = state.withLock { state -> CheckedContinuation<Connection?, Never>? in
            defer {
                state.finished = true
                state.waiter = nil
            }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next admitted connection that is still open, or nil once the listener is closed.
    func nextConnection() async -> Connection? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Connection?, Never>) in
                let outcome = state.withLock { state -> Connection?? in
                    while !state.ready.isEmpty {
                        let connection = state.ready.removeFirst()
                        if !connection.isClosed { return .some(connection) }
                    }
                    if state.finished || state.waiter != nil || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Removes the socket file this listener created, if the path still names that file.
    private func removeSocketFile() {
        guard let socketFile else { return }
        var info = stat()
        if lstat(socketFile.path, &info) == 0, UInt64(info.st_dev) == socketFile.device,
            UInt64(info.st_ino) == socketFile.inode
        {
            unlink(socketFile.path)
        }
    }

    /// Accepts a few connections per turn of the loop, so the reads of those accepted (a console's
    /// hello) are seen between batches and count when the slowest is chosen for shedding.
    private func acceptPending(scratch: UnsafeMutableRawBufferPointer) {
        for _ in 0..<16 {
            let fd = state.withLock { $0.fd }
            guard fd >= 0 else { return }
            let client = ccordis_accept(fd)
            if client < 0 {
                let number = errno
                switch number {
                case EAGAIN, EWOULDBLOCK: return
                case EINTR, ECONNABORTED, EPROTO: continue
                default:
                    loop.report(TransportEvent(
                        .acceptFailed, "accept on \(address) failed: \(TransportError.systemText(number)); retrying in 100 ms",
                        error: TransportError(.systemError, "accept failed", errno: number)))
                    pauseAccepting()
                    return
                }
            }
            admit(client, scratch: scratch)
        }
    }

    /// Stops watching for 100 ms, so a persistent accept failure (no file descriptors) cannot spin.
    private func pauseAccepting() {
        let fd = state.withLock { state -> Int32 in
            state.watched = false
            return state.fd
        }
        loop.unwatch(fd: fd)
        loop.schedule(after: .milliseconds(100)) { [self] in
            let fd = state.withLock { state -> Int32 in
                guard state.fd >= 0, !state.watched else { return -1 }
                state.watched = true
                return state.fd
            }
            if fd >= 0 { loop.rewatch(token: token, fd: fd, events: CCORDIS_EVENT_READ) }
        }
    }

    /// The source a connection counts against: its IP address on TCP, its user id on a Unix socket.
    private static func source(of connection: Connection) -> String {
        if let credentials = connection.credentials { return "uid \(credentials.uid)" }
        if case .tcp(let host, _)? = connection.remoteAddress { return host }
        return "unknown"
    }

    /// The pending connection to shed among `candidates` (indices into `pending`): one from which no
    /// whole frame arrived before any that sent one, then the one whose last progress (its accept, or
    /// its last whole frame) is the oldest, the oldest accepted among equals. A peer that goes through
    /// its handshake promptly keeps moving to the back; one that stalled, whatever bytes it sent, is
    /// shed first.
    private static func slowest(_ pending: [Pending], among candidates: [Int]) -> Int? {
        var best: (index: Int, framed: Int, progress: ContinuousClock.Instant, order: UInt64)?
        for index in candidates {
            let entry = pending[index]
            let progress = entry.connection.handshakeProgress
            let framed = progress.framed ? 1 : 0
            if let current = best, (current.framed, current.progress, current.order) <= (framed, progress.at, entry.order) {
                continue
            }
            best = (index, framed, progress.at, entry.order)
        }
        return best?.index
    }

    /// The indices of the pending connections of the sources that hold the most of them: a flood from
    /// one place displaces its own connections first, not those of other sources; a flood from many
    /// places, each holding as many as the newcomer's source, competes with it on progress alone.
    private static func busiestSources(_ pending: [Pending]) -> [Int] {
        var counts: [String: Int] = [:]
        for entry in pending { counts[entry.source, default: 0] += 1 }
        guard let most = counts.values.max() else { return [] }
        return pending.indices.filter { counts[pending[$0].source] == most }
    }

    private func admit(_ client: Int32, scratch: UnsafeMutableRawBufferPointer) {
        var credentials: PeerCredentials?
        if address.isUnix {
            credentials = PeerCredentials.read(from: client)
            guard let peer = credentials, options.policy.permits(peer) else {
                Glibc.close(client)
                let who = credentials?.description ?? "unknown credentials"
                loop.report(TransportEvent(
                    .peerRefused, "refused peer \(who) on \(address): not allowed by the socket policy",
                    credentials: credentials,
                    error: TransportError(.peerRefused, "peer \(who) is not allowed on \(address)")))
                return
            }
        }
        // Make room: shed connections still in their handshake before refusing anyone.
        let full = shedOne(scratch: scratch, while: { $0.live >= options.maxConnections }, among: { Array($0.pending.indices) })
        let admitted = state.withLock { $0.live - (full == nil ? 0 : 1) < options.maxConnections }
        shedAll(full.map { [$0] } ?? [], why: "the listener holds \(options.maxConnections) connections")
        guard admitted else {
            Glibc.close(client)
            loop.report(TransportEvent(
                .connectionLimitReached,
                "refused a connection on \(address): \(options.maxConnections) connections already open",
                credentials: credentials,
                error: TransportError(.tooManyConnections, "listener on \(address) is full")))
            return
        }
        var tls: TLSStreamFilter?
        if let context = options.tls, !address.isUnix {
            do {
                tls = try TLSStreamFilter(context: context, side: .server)
            } catch {
                Glibc.close(client)
                loop.report(TransportEvent(
                    .acceptFailed, "cannot start TLS on a connection to \(address): \(error.message)",
                    error: TransportError(.tls, error.message)))
                return
            }
        }
        let connection: Connection
        do {
            connection = try Connection(
                fd: client, loop: loop, limits: options.limits, credentials: credentials, streamFilter: tls)
        } catch {
            return
        }
        let source = Self.source(of: connection)
        var shed: [Connection] = []
        let perSource = max(1, options.maxPendingHandshakesPerSource)
        if let one = shedOne(
            scratch: scratch, while: { state in state.pending.count { $0.source == source } >= perSource },
            among: { state in state.pending.indices.filter { state.pending[$0].source == source } })
        {
            shed.append(one)
        }
        // Bounded: each round takes one pending connection out, or stops.
        while let one = shedOne(
            scratch: scratch, while: { $0.pending.count >= max(1, options.maxPendingHandshakes) },
            among: { Self.busiestSources($0.pending) })
        {
            shed.append(one)
        }
        state.withLock { state in
            state.live += 1
            state.pending.append(Pending(connection: connection, order: state.nextOrder, source: source))
            state.nextOrder += 1
        }
        shedAll(shed, why: "too many connections from \(source) or in all have not finished their handshake")
        let id = connection.id
        connection.whenEstablished { [self] in
            state.withLock { state in state.pending.removeAll { $0.connection.id == id } }
        }
        connection.whenClosed { [self] _ in
            state.withLock { state in
                state.live -= 1
                state.pending.removeAll { $0.connection.id == id }
                state.ready.removeAll { $0.id == id }
            }
        }
        let waiter = state.withLock { state -> CheckedContinuation<Connection?, Never>? in
            guard !connection.isClosed else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.ready.append(connection)
            return nil
        }
        waiter?.resume(returning: connection)
    }

    /// Takes out the pending connection to shed among those `among` picks (indices into `pending`, read
    /// under the lock), or nil when there is none. A candidate from which no whole frame has arrived
    /// first reads what waits in its socket (on the loop thread, as its own turn would): a peer whose
    /// hello is there, not yet read in this turn of the loop, has made progress and is spared, and the
    /// choice is made again, while `needed` still holds. Bounded: each round takes one out, or leaves one
    /// fewer unframed candidate.
    private func shedOne(
        scratch: UnsafeMutableRawBufferPointer, while needed: (borrowing State) -> Bool, among: (borrowing State) -> [Int]
    ) -> Connection? {
        let rounds = state.withLock { $0.pending.count } + 1
        for _ in 0..<rounds {
            // A candidate that closed while it read (its peer had gone) may have made the room.
            let chosen = state.withLock { state -> Connection? in
                guard needed(state) else { return nil }
                return Self.slowest(state.pending, among: among(state)).map { state.pending[$0].connection }
            }
            guard let chosen else { return nil }
            if !chosen.handshakeProgress.framed {
                chosen.catchUp(scratch: scratch)
                if chosen.handshakeProgress.framed || chosen.isClosed { continue }
            }
            let taken = state.withLock { state -> Connection? in
                guard let index = state.pending.firstIndex(where: { $0.connection === chosen }) else { return nil }
                return Self.take(index, from: &state)
            }
            if let taken { return taken }
        }
        return nil
    }

    /// Removes the pending entry at `index` (and from the ready queue), returning its connection.
    private static func take(_ index: Int, from state: inout State) -> Connection {
        let connection = state.pending.remove(at: index).connection
        state.ready.removeAll { $0.id == connection.id }
        return connection
    }

    /// Closes shed connections at once and reports them.
    private func shedAll(_ connections: [Connection], why: String) {
        for connection in connections {
            let origin = connection.remoteAddress?.description ?? connection.credentials?.description ?? "a peer"
            let error = TransportError(
                .handshakeShed, "connection \(connection.id) from \(origin) was closed before its handshake: \(why)")
            connection.abort(error)
            loop.report(TransportEvent(
                .handshakeShed, error.message, connectionID: connection.id, credentials: connection.credentials,
                error: error))
        }
    }
}

extension Listener: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        acceptPending(scratch: scratch)
    }

    func loopStopped() {
        closeOnLoop()
    }
}
