import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP connect in progress: waits on the loop for the socket to become writable, then reports the
/// outcome once (success, failure, or the connect timeout), on the loop thread.
final class PendingDial: Sendable {
    private struct State {
        var completion: (@Sendable (Result<Void, any Error>) -> Void)?
        var timer: UInt64?
        var done = false
    }

    private let fd: Int32
    private let token: UInt64
    private let loop: EventLoop
    private let target: Address
    private let state = Mutex(State())

    init(fd: Int32, loop: EventLoop, target: Address) {
        self.fd = fd
        self.loop = loop
        self.target = target
        self.token = loop.allocateToken()
    }

    /// Watches the socket until it is connected, then calls `completion` once, on the loop thread, with
    /// the outcome (success, failure, or the connect timeout). The caller keeps ownership of the
    /// descriptor either way.
    func start(timeout: Duration, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        state.withLock { $0.completion = completion }
        do {
            try loop.register(token: token, fd: fd, events: CCORDIS_EVENT_WRITE, handler: self)
        } catch {
            finish(.failure(error))
            return
        }
        let timer = loop.schedule(after: timeout) { [self] in
            finish(.failure(TransportError(.connectTimeout, "connecting to \(target) took longer than \(timeout)")))
        }
        state.withLock { $0.timer = timer }
    }

    private func finish(_ outcome: Result<Void, any Error>) {
        let taken = state.withLock { state -> ((@Sendable (Result<Void, any Error>) -> Void)?, UInt64?)? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.completion = nil }
            return (state.completion, state.timer)
        }
        guard let (completion, timer) = taken else { return }
        loop.deregister(token: token, fd: fd)
        if let timer { loop.cancelTimer(timer) }
        completion?(outcome)
    }
}

extension PendingDial: LoopHandler {
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer) {
        let error = ccordis_socket_error(fd)
        if error == 0 {
            finish(.success(()))
        } else if error == ECONNREFUSED {
            finish(.failure(TransportError(.connectionRefused, "nobody listens on \(target)", errno: error)))
        } else {
            let number = error < 0 ? errno : error
            finish(.failure(TransportError(.connectionRefused, "cannot connect to \(target)", errno: number)))
        }
    }

    func loopStopped() {
        finish(.failure(TransportError(.closed, "the event loop stopped")))
    }
}
