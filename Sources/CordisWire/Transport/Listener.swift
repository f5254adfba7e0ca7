import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A listening socket on an `EventLoop` that accepts connections, applies the peer policy and the
/// connection limit, and hands admitted connections to `connections`.
///
/// Refused peers (by credentials or by the limit) are closed right after `accept`, before anything is
/// read, and reported as `TransportEvent`s. Create one with `EventLoop.listen(on:options:)` or
/// `EventLoop.adoptListener(fd:options:)`; `close()` stops it and removes the Unix socket file it
/// created.
public final class Listener: Sendable {
    private struct State {
        var fd: Int32
        var live = 0
        var watched = true
    }

    /// The address actually bound (with the real port when port 0 was asked for).
    public let address: Address
    /// The options this listener applies.
    public let options: ListenerOptions
    /// The admitted connections, in accept order; ends when the listener closes.
    ///
    /// Its buffer is bounded by `maxConnections`: a connection counts until it closes.
    public let connections: AsyncStream<Connection>

    private let loop: EventLoop
    private let token: UInt64
    private let state: Mutex<State>
    private let continuation: AsyncStream<Connection>.Continuation
    /// The socket file this listener created (device, inode), removed on close if still the same.
    private let socketFile: (path: String, device: UInt64, inode: UInt64)?

    init(fd: Int32, address: Address, loop: EventLoop, options: ListenerOptions, createdPath: String?) throws {
        self.address = address
        self.options = options
        self.loop = loop
        self.token = loop.allocateToken()
        self.state = Mutex(State(fd: fd))
        (connections, continuation) = AsyncStream<Connection>.makeStream(bufferingPolicy: .unbounded)
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

    /// The number of admitted connections that have not finished their handshake.
    public var pendingHandshakeCount: Int { state.withLock { $0.live } }

    /// The number of admitted connections still open.
    public var connectionCount: Int { state.withLock { $0.live } }

    /// Stops listening: closes the socket, removes the Unix socket file it created, ends
    /// `connections`. Accepted connections stay open. Idempotent.
    public func close() {
        removeSocketFile()
        if loop.inLoopThread { closeOnLoop() } else { loop.execute { [self] in closeOnLoop() } }
    }

    private func closeOnLoop() {
        let fd = state.withLock { state -> Int32 in
            defer { state.fd = -1 }
            return state.fd
        }
        guard fd >= 0 else { return }
        loop.deregister(token: token, fd: fd)
        Glibc.close(fd)
        removeSocketFile()
        continuation.finish()
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

    private func acceptPending() {
        for _ in 0..<64 {
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
            admit(client)
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

    private func admit(_ client: Int32) {
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
        let admitted = state.withLock { state -> Bool in
            guard state.live < options.maxConnections else { return false }
            state.live += 1
            return true
        }
        guard admitted else {
            Glibc.close(client)
            loop.report(TransportEvent(
                .connectionLimitReached,
                "refused a connection on \(address): \(options.maxConnections) connections already open",
                credentials: credentials,
                error: TransportError(.tooManyConnections, "listener on \(address) is full")))
            return
        }
        let connection: Connection
        do {
            connection = try Connection(fd: client, loop: loop, limits: options.limits, credentials: credentials)
        } catch {
            state.withLock { $0.live -= 1 }
            return
        }
        connection.whenClosed { [self] _ in state.withLock { $0.live -= 1 } }
        continuation.yield(connection)
    }
}

extension Listener: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        acceptPending()
    }

    func loopStopped() {
        closeOnLoop()
    }
}
