import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The sockets of a test relay (`LoopbackRelay`, `TCPRelay`): its listeners and the pairs of
/// connections it forwards. They are closed here only, under the same lock as every shutdown and
/// injected write, and leave the table as they are closed: nothing can act on a number the relay
/// already closed, which the process may have given since to another test's socket (shut down, a
/// console's connection would end in the middle of its handshake).
final class RelaySockets: Sendable {
    /// One forwarded connection: the end accepted from the client and the one dialled to the target.
    struct Pair: Sendable {
        let client: Int32
        let upstream: Int32
    }

    private struct State {
        var stopped = false
        var listeners: [Int32] = []
        var pairs: [Pair] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Whether `stopAll()` was called.
    var stopped: Bool { state.withLock { $0.stopped } }

    /// Keeps `fd`, a listening socket, until `closeListener(_:)`.
    func addListener(_ fd: Int32) { state.withLock { $0.listeners.append(fd) } }

    /// Closes the listener `fd` (its accept loop has ended).
    func closeListener(_ fd: Int32) {
        state.withLock { state in
            guard let index = state.listeners.firstIndex(of: fd) else { return }
            state.listeners.remove(at: index)
            close(fd)
        }
    }

    /// Keeps `pair` until `release(_:)`; false (and the pair is closed) once stopped.
    func add(_ pair: Pair) -> Bool {
        state.withLock { state in
            guard !state.stopped else {
                close(pair.client)
                close(pair.upstream)
                return false
            }
            state.pairs.append(pair)
            return true
        }
    }

    /// Closes both sockets of `pair` (its pump has ended).
    func release(_ pair: Pair) {
        state.withLock { state in
            guard let index = state.pairs.firstIndex(where: { $0.client == pair.client }) else { return }
            state.pairs.remove(at: index)
            close(pair.client)
            close(pair.upstream)
        }
    }

    /// Shuts down every open pair: each end sees the close, and each pump ends and releases its pair.
    func shutdownPairs() {
        state.withLock { state in
            for pair in state.pairs {
                shutdown(pair.client, Int32(SHUT_RDWR))
                shutdown(pair.upstream, Int32(SHUT_RDWR))
            }
        }
    }

    /// Stops for good: the listeners stop listening (their accept loops end and close them) and every
    /// pair is shut down. Idempotent.
    func stopAll() {
        state.withLock { state in
            state.stopped = true
            for listener in state.listeners { shutdown(listener, Int32(SHUT_RDWR)) }
        }
        shutdownPairs()
    }

    /// Writes `bytes` into every open pair toward its target; how many took all of them.
    func injectUpstream(_ bytes: [UInt8]) -> Int {
        state.withLock { state in
            var count = 0
            for pair in state.pairs {
                let written = bytes.withUnsafeBytes { send(pair.upstream, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if written == bytes.count { count += 1 }
            }
            return count
        }
    }
}
