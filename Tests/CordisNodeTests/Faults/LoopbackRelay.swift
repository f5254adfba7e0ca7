import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A Unix-socket relay the test controls: for each route it listens on a path and forwards each
/// connection to the route's target, byte for byte, on threads of its own. `cut()` makes every route a
/// black hole (nothing is forwarded either way and the sockets stay open, as in a network partition, so
/// each end learns of it from its heartbeats only); `cut(after:)` does so right after forwarding a
/// chunk that contains the given text; `restore()` closes the cut connections and forwards new ones.
final class LoopbackRelay: Sendable {
    private struct State {
        var cut = false
        var stopped = false
        /// Connections accepted while cut: never forwarded, closed at the restore.
        var held: [Int32] = []
        var forwarded = 0
        var trigger: [UInt8]?
    }

    private let state = Mutex(State())
    /// The listeners and forwarded pairs, closed only there.
    private let sockets = RelaySockets()

    /// Listens on each route's `path` and forwards to its `target`.
    init(routes: [(path: String, target: String)]) throws {
        for route in routes {
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard listener >= 0, Self.withAddress(route.path, { bind(listener, $0, $1) }) == 0, listen(listener, 64) == 0 else {
                if listener >= 0 { close(listener) }
                throw POSIXError(.EADDRINUSE)
            }
            sockets.addListener(listener)
            let target = route.target
            let thread = Thread { [self] in acceptLoop(listener, target: target) }
            thread.start()
        }
    }

    /// Cuts every route right after a chunk containing `text` was forwarded.
    func cut(after text: String) { state.withLock { $0.trigger = Array(text.utf8) } }

    /// How many bytes were forwarded so far (both ways).
    var forwarded: Int { state.withLock { $0.forwarded } }

    /// Stops forwarding: every byte either way is held back from now on.
    func cut() { state.withLock { $0.cut = true } }

    /// Closes the connections that were cut (their ends see the close) and forwards again.
    func restore() {
        let held = state.withLock { state -> [Int32] in
            defer { state.held.removeAll() }
            return state.held
        }
        for fd in held { close(fd) }
        // Shut down before forwarding again, so no byte held back crosses after the cut.
        sockets.shutdownPairs()
        state.withLock { $0.cut = false }
    }

    /// Stops the relay and closes everything.
    func stop() {
        let held = state.withLock { state -> [Int32] in
            state.stopped = true
            defer { state.held.removeAll() }
            return state.held
        }
        for fd in held { close(fd) }
        sockets.stopAll()
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private func acceptLoop(_ listener: Int32, target: String) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            // While cut, a new connection is accepted and goes nowhere, like the old ones.
            let (stopped, held) = state.withLock { state -> (Bool, Bool) in
                if !state.stopped && state.cut { state.held.append(client) }
                return (state.stopped, !state.stopped && state.cut)
            }
            if stopped { close(client); break }
            if held { continue }
            let upstream = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            if upstream < 0 || Self.withAddress(target, { connect(upstream, $0, $1) }) != 0 {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            let pair = RelaySockets.Pair(client: client, upstream: upstream)
            guard sockets.add(pair) else { break }
            let pump = Thread { [self] in pumpLoop(pair) }
            pump.start()
        }
        sockets.closeListener(listener)
    }

    /// Copies bytes both ways until either end closes; holds them back while cut.
    private func pumpLoop(_ pair: RelaySockets.Pair) {
        defer { sockets.release(pair) }
        let (a, b) = (pair.client, pair.upstream)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        loop: while true {
            // While cut nothing is read (the bytes wait in the sockets); the short poll timeout is how
            // the pump notices the restore.
            let (cut, stopped) = state.withLock { ($0.cut, $0.stopped) }
            if stopped { break }
            for index in 0..<2 { fds[index].events = cut ? 0 : Int16(POLLIN) }
            let ready = poll(&fds, 2, 50)
            if ready < 0 && errno != EINTR { break }
            if cut {
                // An end that closed during the cut is let go; the other learns of it only at the restore.
                for index in 0..<2 where fds[index].fd >= 0 && fds[index].revents != 0 { fds[index].fd = -1 }
                if fds[0].fd < 0 && fds[1].fd < 0 { break }
                continue
            }
            if fds[0].fd < 0 || fds[1].fd < 0 { break }
            if ready <= 0 { continue }
            for index in 0..<2 where fds[index].revents != 0 {
                guard let count = RelayBytes.forwardChunk(from: fds[index].fd, to: fds[1 - index].fd, buffer: &buffer)
                else { break loop }
                state.withLock { state in
                    state.forwarded += count
                    if let trigger = state.trigger, RelayBytes.contains(buffer[0..<count], trigger) {
                        state.trigger = nil
                        state.cut = true
                    }
                }
            }
        }
    }
}
